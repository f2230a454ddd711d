/**
 * Baseline for bench/idle-memory.ts: N `ws` connections held open, each sending one 64-byte
 * message every `every` seconds (spread evenly), the replies just counted. Prints its RSS before
 * connecting and after holding, as JSON, so the parent can compute bytes per connection.
 *
 *   node --import tsx bench/baseline/ws-idle-client.ts <url> <connections> <connectRate> <holdSeconds> <every>
 */
import { WebSocket } from "ws";

const [url = "ws://127.0.0.1:9001/echo", nArg = "5000", rateArg = "1000", holdArg = "15", everyArg = "6"] = process.argv.slice(2);
const n = Number(nArg),
  connectRate = Number(rateArg),
  holdSeconds = Number(holdArg),
  everyMs = Number(everyArg) * 1000;

const rssBefore = process.memoryUsage.rss();
const sockets: WebSocket[] = [];
let opened = 0,
  received = 0;
const t0 = performance.now();
// Connect at a fixed rate, as the agent does; each connection then pings on its own timer.
await new Promise<void>((resolve) => {
  let started = 0;
  const step = () => {
    const due = Math.min(n, Math.floor(((performance.now() - t0) / 1000) * connectRate) + 1);
    while (started < due) {
      started++;
      const ws = new WebSocket(url, { perMessageDeflate: false });
      ws.on("message", () => received++);
      ws.once("open", () => {
        const ping = () => ws.readyState === ws.OPEN && ws.send(Buffer.alloc(64));
        ping();
        setInterval(ping, everyMs);
        if (++opened === n) resolve();
      });
      ws.once("error", () => {
        if (++opened === n) resolve();
      });
      sockets.push(ws);
    }
    if (started < n) setTimeout(step, 1);
  };
  step();
});
await new Promise((r) => setTimeout(r, holdSeconds * 1000));
const rssHeld = process.memoryUsage.rss();
process.stdout.write(`${JSON.stringify({ opened: sockets.filter((s) => s.readyState === s.OPEN).length, received, rssBefore, rssHeld })}\n`);
for (const ws of sockets) ws.terminate();
process.exit(0);
