/**
 * The built-in templates: the benchmarks this field is known by, as plans a user can rerun against
 * their own server in one click. Each points at the matching reference server that `npm start`
 * runs (apps/targets: ws 9001, Socket.IO 9002, SockJS 9003, STOMP 9004, HTTP 9005, HTTP under
 * node:cluster 9007), and each parses with the plan schema (templates.test.ts proves it); each,
 * scaled down, runs against its reference server (apps/agent templates-run.test.ts proves it).
 */
export interface PlanTemplate {
  id: "broadcast-sweep" | "ping-throughput" | "concurrency-storm" | "group-location" | "http-rps" | "capacity-search";
  title: string;
  description: string;
  /** The plan, as YAML with comments. */
  yaml: string;
}

export const TEMPLATES: readonly PlanTemplate[] = [
  {
    id: "broadcast-sweep",
    title: "Broadcast sweep (SockJS/Socket.IO 2011)",
    description:
      "One room, every message to everyone. The aggregate send rate starts at 1/s and rises by max(1, 1000/C) per 3 s step with 1 s gaps, so deliveries grow by about 1000/s per step; each client times its own echo and every delivery. A level ends when an echo exceeds 5 s, a connection drops, or p95 passes 200 ms. Chart: latency vs deliveries/s.",
    yaml: `name: broadcast sweep — 100 clients in one room
target:
  url: http://127.0.0.1:9003/broadcast     # the SockJS reference room server
  protocol: sockjs
  sockjs: { transports: [websocket] }
connections: { count: 100, rate: 100 }       # rerun with 25, 50, 100, 500, 1000, 2000
scenario:
  kind: broadcast
  room: volley
  echo: true                                 # the server sends each message back to its sender too
  message: { bytes: 64, rate: 1, per: aggregate, timeout: 10s }
  duration: 10m                              # the longest the sweep may step
sweep:
  from: 1                                    # client-sent messages/s, all clients together
  step: 10                                   # max(1, 1000 / count): ~1000 more deliveries/s per step
  hold: 3s
  gap: 1s
  steps: 100
  stopWhen: { max: 5s, p95: 200ms, disconnects: 0 }
thresholds: [ "delivery.p95 < 200ms" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "ping-throughput",
    title: "Ping throughput (SocketCluster 2014)",
    description:
      "One new client per second up to 100, each emitting `ping` 1700 times a second; the server answers `pong {count}` through the acknowledgement. Round-trip latency and the pings per second the server keeps up with.",
    yaml: `name: ping throughput — 100 clients × 1700 pings/s
target:
  url: http://127.0.0.1:9002/ping            # the Socket.IO reference ping server (namespace /ping)
  protocol: socketio
  socketio: { transports: [websocket], event: ping, ack: true }
connections: { count: 100, rate: 1 }         # one new client per second
scenario:
  kind: echo
  message: { bytes: 64, rate: 1700, per: connection, arrival: constant, timeout: 10s }
  duration: 30s                              # each client pings for 30 s after it connects
thresholds: [ "latency.p99 < 1s", "messages.loss_rate < 1%" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "concurrency-storm",
    title: "Concurrency storm (SocketCluster 2014)",
    description:
      "Connect 160 clients a second up to 42,000 and hold; each pings every ~6 s and a canary client pings every second. Reports connect times, round trips, the canary's latency and drops. The raw WebSocket ping server (`/ping`) answers each ping with the ping itself: raw WebSocket has no acknowledgement to carry a `{count}` beside the message, and each reply is matched by the message's own bytes (over Socket.IO, `http://127.0.0.1:9002/ping` with `socketio: { event: ping, ack: true }` answers `{count}` as in ping-throughput).",
    yaml: `name: concurrency storm — 42,000 clients
target:
  url: ws://127.0.0.1:9001/ping              # the raw WebSocket reference ping server (pong = the ping, unchanged)
  protocol: ws
connections: { count: 42000, rate: 160 }      # ~4.4 minutes of ramp
scenario:
  kind: storm
  message: { bytes: 64, rate: 0.1667, per: connection, timeout: 10s }   # one ping every ~6 s
  canary: { rate: 1 }                        # one extra client, timed apart
  duration: 60s                              # each client holds (and pings) for 60 s after connecting
thresholds: [ "connect.p95 < 1s", "canary.p99 < 500ms", "connections.failed == 0" ]
agents: { pool: default, count: 4 }
`,
  },
  {
    id: "group-location",
    title: "Group location sharing",
    description:
      "Stages 20 s → 300, 30 s → 300, 10 s → 0; fixed groups of 4; every member shares its position every 3 s with the other three. Delivery latency and delivery ratio. To compare transports side by side, rerun with another protocol and its reference server: sse at http://127.0.0.1:9005/sse, long-polling or short-polling at http://127.0.0.1:9005/poll, stomp at ws://127.0.0.1:9004/stomp, socketio at http://127.0.0.1:9002, sockjs at http://127.0.0.1:9003/echo.",
    yaml: `name: group location — groups of 4 over WebSocket
target:
  url: ws://127.0.0.1:9001/group             # the raw WebSocket reference group server (?room= is the group)
  protocol: ws
connections:
  count: 300
  stages:
    - { duration: 20s, target: 300 }
    - { duration: 30s, target: 300 }
    - { duration: 10s, target: 0 }
scenario:
  kind: groups
  size: 4
  message: { bytes: 64, rate: 0.3333, per: connection, timeout: 10s }   # one position every 3 s
  duration: 60s                              # a member shares while connected, at most this long
thresholds: [ "delivery.p95 < 200ms", "delivery.ratio > 99%" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "http-rps",
    title: "HTTP requests per second",
    description:
      "Plain HTTP requests at an open (Poisson) arrival rate over keep-alive connections, stepped up until the server fails: latency and requests per second, as the socket-server and Node cluster comparisons measured. Rerun against http://127.0.0.1:9007/echo, the same server run by node:cluster workers (HTTP_CLUSTER_WORKERS, one per CPU by default), to compare one process with a cluster.",
    yaml: `name: http rps — until failure
target:
  url: http://127.0.0.1:9005/echo            # the HTTP reference echo, one process (9007: the node:cluster one)
  protocol: http
  http: { method: POST }
connections: { count: 50, rate: 50 }
scenario:
  kind: http-rps
  message: { bytes: 64, rate: 500, per: aggregate, arrival: poisson, timeout: 5s }
  duration: 5m
sweep:
  step: 500                                  # requests/s added per step, from message.rate
  hold: 5s
  gap: 1s
  steps: 40
  stopWhen: { p99: 1s, errorRate: 1 }
thresholds: [ "errors.rate < 1%" ]
agents: { pool: default, count: 1 }
`,
  },
  {
    id: "capacity-search",
    title: "Capacity search",
    description:
      "Steps the message rate until the SLO (p95 ≤ 200 ms) breaks and reports the highest rate that held: one number to put in a README. Works with any scenario; this one is the WebSocket echo.",
    yaml: `name: capacity search — ws echo, p95 ≤ 200 ms
target:
  url: ws://127.0.0.1:9001/echo              # the raw WebSocket reference echo
  protocol: ws
connections: { count: 100, rate: 100 }
scenario:
  kind: echo
  message: { bytes: 64, rate: 1000, per: aggregate, timeout: 10s }
  duration: 10m
sweep:
  step: 1000
  hold: 3s
  gap: 1s
  steps: 100
  stopWhen: { p95: 200ms }
agents: { pool: default, count: 1 }
`,
  },
];
