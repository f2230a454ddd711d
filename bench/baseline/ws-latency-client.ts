/**
 * Baseline for bench/latency-truth.ts: the least a Node client can do to time an echo from its
 * intended send time — N `ws` connections, each sending on its own fixed schedule (phases spread
 * evenly over one interval), one timer loop that sends everything due (as the agent does: a timer
 * to the next due, rounded up to whole ms), the intended time carried in the payload and latency
 * = receive − intended on performance.now(). No histograms, no frames, no health sampling: what is
 * left of its tail is Node's and this machine's, not a tool's.
 *
 * Prints one JSON line: sent, received, latency and send-lag percentiles in ms, and cpuSeconds: the
 * process's CPU from just before the first connect to the last reply (the agent's run window).
 *
 * `json` (the flow variant's twin): each message is a text frame of JSON `{ id, seq, pad }` the size
 * of the agent's flow message, and a reply is matched by parsing it and reading `$.id` (the message's
 * number; its intended time is computed again from it), the least a client matching JSON by a field
 * does. `binary` (default): 64 bytes carrying the intended time itself.
 *
 *   node --import tsx bench/baseline/ws-latency-client.ts <url> <connections> <ratePerConnection> <seconds> [binary|json]
 */
import { WebSocket } from "ws";

const [url = "ws://127.0.0.1:9001/echo?delay=25", connArg = "50", rateArg = "20", secArg = "20", mode = "binary"] = process.argv.slice(2);
if (mode !== "binary" && mode !== "json") throw new Error(`mode must be binary or json (got ${mode})`);
const json = mode === "json";
/** Pads the JSON message to 64 bytes at the run's largest id and seq, about the agent's flow message. */
const PAD = "x".repeat(31);
const conns = Number(connArg),
  rate = Number(rateArg),
  seconds = Number(secArg);
const intervalMs = 1000 / rate;
const perConn = Math.round(rate * seconds);
const total = conns * perConn;

const cpu0 = process.cpuUsage();
const sockets = await Promise.all(
  Array.from(
    { length: conns },
    () =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url, { perMessageDeflate: false });
        ws.once("open", () => resolve(ws));
        ws.once("error", reject);
      }),
  ),
);

const latencies: number[] = [];
const lags: number[] = [];
const done = new Promise<void>((resolve) => {
  for (const ws of sockets) {
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      const intended = json && !isBinary ? dueAt(Number((JSON.parse(data.toString("utf8")) as { id: string }).id)) : data.readDoubleBE(0);
      latencies.push(performance.now() - intended);
      if (latencies.length === total) resolve();
    });
  }
});

// Message k of connection c is due at t0 + c·(interval/conns) + k·interval: all dues in one sorted walk.
const t0 = performance.now() + 50;
const dueAt = (n: number) => t0 + (n % conns) * (intervalMs / conns) + Math.floor(n / conns) * intervalMs;
let next = 0;
const loop = () => {
  const now = performance.now();
  while (next < total && dueAt(next) <= now) {
    const intended = dueAt(next);
    if (json) {
      sockets[next % conns]!.send(JSON.stringify({ id: String(next), seq: Math.floor(next / conns), pad: PAD }));
    } else {
      const payload = Buffer.alloc(64);
      payload.writeDoubleBE(intended, 0);
      sockets[next % conns]!.send(payload);
    }
    lags.push(performance.now() - intended);
    next++;
  }
  if (next < total) setTimeout(loop, Math.max(0, Math.ceil(dueAt(next) - performance.now())));
};
setTimeout(loop, 50);
await Promise.race([done, new Promise((r) => setTimeout(r, seconds * 1000 + 10_000))]);
const cpu = process.cpuUsage(cpu0);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))]! * 1000) / 1000 : 0;
};
process.stdout.write(
  `${JSON.stringify({
    sent: next,
    received: latencies.length,
    latency: { p50: pct(latencies, 0.5), p99: pct(latencies, 0.99), max: pct(latencies, 1) },
    sendLag: { p50: pct(lags, 0.5), p99: pct(lags, 0.99), max: pct(lags, 1) },
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  })}\n`,
);
for (const ws of sockets) ws.terminate();
process.exit(0);
