/**
 * Baseline for bench/ws-echo-cpu.ts: the least a Node client can do for the same job — N `ws`
 * connections, open-loop sends at a fixed total rate (one timer loop, no waiting for replies),
 * replies counted. Prints one JSON line with its own CPU (process.cpuUsage) from just before
 * connecting to the last reply, the same window the agent reports.
 *
 * `json` (the twin of the agent's flow variant): each message is a text frame of JSON
 * `{ id, seq, pad }` (64 bytes) and each reply is parsed and its `$.id` read before it counts: the
 * least a client that matches JSON replies by a field does. `binary` (default): 64 opaque bytes.
 *
 *   node --import tsx bench/baseline/ws-echo-client.ts <url> <connections> <totalRate> <seconds> [binary|json]
 */
import { WebSocket } from "ws";

const [url = "ws://127.0.0.1:9001/echo", connArg = "100", rateArg = "20000", secArg = "5", mode = "binary"] = process.argv.slice(2);
if (mode !== "binary" && mode !== "json") throw new Error(`mode must be binary or json (got ${mode})`);
const json = mode === "json";
/** 64 bytes of JSON at the run's largest id (5 digits) and seq (3). */
const PAD = "x".repeat(31);
const conns = Number(connArg),
  rate = Number(rateArg),
  seconds = Number(secArg);
const total = Math.round(rate * seconds);
const intervalMs = 1000 / rate;

const cpu0 = process.cpuUsage();
const sockets: WebSocket[] = [];
await Promise.all(
  Array.from(
    { length: conns },
    () =>
      new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(url, { perMessageDeflate: false });
        ws.once("open", () => resolve());
        ws.once("error", reject);
        sockets.push(ws);
      }),
  ),
);

let received = 0,
  sent = 0;
const done = new Promise<void>((resolve) => {
  for (const ws of sockets) {
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      // A reply only counts once its id is read, as a client matching by $.id would.
      if (json && (isBinary || typeof (JSON.parse(data.toString("utf8")) as { id?: unknown }).id !== "string")) return;
      if (++received === total) resolve();
    });
  }
});
const t0 = performance.now();
const loop = () => {
  const due = Math.min(total, Math.floor((performance.now() - t0) / intervalMs) + 1);
  while (sent < due) {
    if (json) {
      sockets[sent % conns]!.send(JSON.stringify({ id: String(sent), seq: Math.floor(sent / conns), pad: PAD }));
    } else {
      const payload = Buffer.alloc(64);
      payload.writeDoubleBE(t0 + sent * intervalMs, 16); // an intended time, as a real client would carry
      sockets[sent % conns]!.send(payload);
    }
    sent++;
  }
  if (sent < total) setTimeout(loop, 1);
};
loop();
await Promise.race([done, new Promise((r) => setTimeout(r, seconds * 1000 + 10_000))]);
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ sent, received, cpuSeconds: (cpu.user + cpu.system) / 1e6, wallSeconds: (performance.now() - t0) / 1000 })}\n`);
for (const ws of sockets) ws.terminate();
process.exit(0);
