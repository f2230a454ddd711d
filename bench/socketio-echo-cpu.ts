/**
 * CPU-seconds per 100,000 round trips, Socket.IO v4 echo over the websocket transport, 100
 * connections, 20,000 msg/s for 5 s: a minimal socket.io-client (bench/baseline/socketio-echo-client.ts)
 * vs `volley-agent run` with the same load. Same measurement as ws-echo-cpu.ts (bench/lib/echo-cpu.ts):
 * target on core 0, client on core 1, median of RUNS runs each, alternating.
 *
 *   node --import tsx bench/socketio-echo-cpu.ts [runs=3]
 *
 * Both emit a 64-byte binary `echo` event and count the `echo` event the target sends back (the
 * driver's default: no ack), websocket transport only.
 */
import { ECHO_CPU_LOAD, echoCpuSummary, runEchoCpu } from "./lib/echo-cpu";
import { startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const { conns: CONNS, rate: RATE, seconds: SECONDS } = ECHO_CPU_LOAD;
const BASELINE = "baseline socket.io-client";

const target = await startTarget();
let rows: Awaited<ReturnType<typeof runEchoCpu>>;
try {
  rows = await runEchoCpu({
    runs: RUNS,
    baselineName: BASELINE,
    baselineArgs: ["bench/baseline/socketio-echo-client.ts", target.socketioUrl, String(CONNS), String(RATE), String(SECONDS)],
    planYaml: `name: socketio-echo-cpu bench
target: { url: "${target.socketioUrl}", protocol: socketio, socketio: { transports: [websocket] } }
connections: { count: ${CONNS}, rate: 10000 }
scenario: { kind: echo, message: { rate: ${RATE / CONNS}, bytes: 64 }, duration: ${SECONDS}s }
`,
  });
} finally {
  await target.stop();
}
console.log(JSON.stringify(echoCpuSummary(RUNS, BASELINE, rows), null, 2));
