/** The example plan prefilled in the UI and shown in the README. */
export const EXAMPLE_PLAN_YAML = `name: ws echo — 50 connections
target:
  url: ws://127.0.0.1:9001/echo
  protocol: ws
connections:
  count: 50
  rate: 50          # new connections per second
scenario:
  kind: echo
  message: { bytes: 64, rate: 10, per: connection, arrival: constant }
  duration: 10s
  warmup: 1s
thresholds:
  - "latency.p95 < 200ms"
  - "errors.rate < 1%"
agents: { pool: default, count: 1 }
`;
