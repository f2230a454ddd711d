/**
 * CPU-seconds per 100,000 round trips, raw WebSocket echo, 100 connections, 20,000 msg/s for 5 s:
 * the minimal `ws` client (bench/baseline/ws-echo-client.ts) vs `volley-agent run` with the same
 * load. Target on core 0, client on core 1, median of RUNS runs each, alternating.
 *
 *   node --import tsx bench/ws-echo-cpu.ts [runs=3]
 *
 * CPU window: both report process.cpuUsage() over the run itself (connect + send + last replies),
 * excluding Node/tsx start-up; the agent prints it on its closing stderr line. Whole-process CPU
 * (start-up included, from /usr/bin/time) is reported too.
 */
import { ECHO_CPU_LOAD, echoCpuSummary, runEchoCpu } from "./lib/echo-cpu";
import { startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const { conns: CONNS, rate: RATE, seconds: SECONDS } = ECHO_CPU_LOAD;
const BASELINE = "baseline ws client";

const target = await startTarget();
let rows;
try {
  rows = await runEchoCpu({
    runs: RUNS,
    baselineName: BASELINE,
    baselineArgs: ["bench/baseline/ws-echo-client.ts", target.url, String(CONNS), String(RATE), String(SECONDS)],
    planYaml: `name: ws-echo-cpu bench
target: { url: "${target.url}" }
connections: { count: ${CONNS}, rate: 10000 }
scenario: { kind: echo, message: { rate: ${RATE / CONNS}, bytes: 64 }, duration: ${SECONDS}s }
`,
  });
} finally {
  await target.stop();
}
console.log(JSON.stringify(echoCpuSummary(RUNS, BASELINE, rows), null, 2));
