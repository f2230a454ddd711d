/**
 * CPU-seconds per 100,000 MQTT round trips through mosquitto, 100 connections over WebSocket, QoS
 * 0, each connection publishing on its own topic and receiving the broker's delivery back: a minimal
 * mqtt.js client (bench/baseline/mqtt-echo-client.ts) vs `volley-agent run` with the same load (goal
 * ≤ 1.3×). Same measurement as ws-echo-cpu.ts (bench/lib/echo-cpu.ts): the broker on core 0, the
 * client on core 1, median of RUNS runs each, alternating.
 *
 *   node --import tsx bench/mqtt-echo-cpu.ts [runs=3] [rate=10000]
 *
 * mosquitto runs from its package (apt-get install mosquitto) with its own config in a temp dir on
 * a free port. Where it cannot open a WebSocket listener itself (Debian 12's 2.0.11), a byte-for-byte
 * WebSocket-to-TCP bridge (bench/lib/mqtt-ws-bridge.ts) runs beside it on core 0: both clients go
 * through the same hop. The total rate defaults to 10,000 msg/s, half the other echo benches', as
 * the bridge and broker share one core.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { echoCpuSummary, runEchoCpu } from "./lib/echo-cpu";
import { spawnPinned, type Pinned } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const RATE = Math.max(100, Math.min(20_000, Number(process.argv[3] ?? 10_000)));
const CONNS = 100;
const SECONDS = 5;
const BASELINE = "baseline mqtt.js client";
const GOAL = 1.3;
const MOSQUITTO = process.env.MOSQUITTO_BIN ?? "/usr/sbin/mosquitto";

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** mosquitto on core 0, with a WebSocket listener of its own or the bridge in front of its MQTT port. */
async function startBroker(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-mosquitto-"));
  const start = async (websockets: boolean) => {
    const port = await freePort();
    const conf = path.join(dir, "mosquitto.conf");
    const lines = [
      `user ${userInfo().username}`,
      "persistence false",
      "log_dest stderr",
      "log_type error",
      `listener ${port} 127.0.0.1`,
      "allow_anonymous true",
    ];
    writeFileSync(conf, `${[...lines, ...(websockets ? ["protocol websockets"] : [])].join("\n")}\n`);
    const p = spawnPinned(0, [MOSQUITTO, "-c", conf], { limitMs: 1_800_000 });
    // Up once its port answers; an exit first (no WebSocket support) says so on stderr.
    for (let i = 0; i < 100; i++) {
      if (p.child.exitCode !== null) return { p: undefined, port };
      const open = await new Promise<boolean>((resolve) => {
        const s = connect({ host: "127.0.0.1", port });
        s.once("connect", () => (s.destroy(), resolve(true)));
        s.once("error", () => resolve(false));
      });
      if (open) {
        // Without WebSocket support it binds the port before it gives up: still running a moment later is up.
        await new Promise((r) => setTimeout(r, 200));
        return { p: p.child.exitCode === null ? p : undefined, port };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`mosquitto did not start: ${p.stderr().slice(-300)}`);
  };
  const stops: Pinned[] = [];
  let url: string;
  const ws = await start(true);
  if (ws.p) {
    stops.push(ws.p);
    url = `ws://127.0.0.1:${ws.port}/mqtt`;
  } else {
    const tcp = await start(false);
    if (!tcp.p) throw new Error("mosquitto exited at start");
    const bridge = spawnPinned(0, [process.execPath, "--import", "tsx", "bench/lib/mqtt-ws-bridge.ts", String(tcp.port)], { limitMs: 1_800_000 });
    stops.push(bridge, tcp.p);
    url = /(ws:\/\/\S+)/.exec(await bridge.waitFor(/mqtt ws bridge listening on/))![1]!;
    console.error(`mosquitto has no WebSocket listener here: bridged at ${url}`);
  }
  return {
    url,
    stop: async () => {
      for (const p of stops) {
        p.kill();
        await p.exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const broker = await startBroker();
let rows: Awaited<ReturnType<typeof runEchoCpu>>;
try {
  rows = await runEchoCpu({
    runs: RUNS,
    baselineName: BASELINE,
    baselineArgs: ["bench/baseline/mqtt-echo-client.ts", broker.url, String(CONNS), String(RATE), String(SECONDS)],
    planYaml: `name: mqtt-echo-cpu bench
target: { url: "${broker.url}", protocol: mqtt }
connections: { count: ${CONNS}, rate: 10000 }
scenario: { kind: echo, message: { rate: ${RATE / CONNS}, bytes: 64 }, duration: ${SECONDS}s }
`,
  });
} finally {
  await broker.stop();
}
const summary = echoCpuSummary(RUNS, BASELINE, rows);
console.log(JSON.stringify({ ...summary, load: { connections: CONNS, rate: RATE, seconds: SECONDS }, goal: GOAL, goalMet: summary.ratio <= GOAL }, null, 2));
