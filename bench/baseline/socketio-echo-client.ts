/**
 * Baseline for bench/socketio-echo-cpu.ts: the least a Node client can do for the same job as the
 * agent's Socket.IO echo — N socket.io-client v4 sockets, open-loop sends at a fixed total rate (one
 * timer loop, no waiting for replies), replies counted. Prints one JSON line with its own CPU
 * (process.cpuUsage) from just before connecting to the last reply, the same window the agent
 * reports, in the same shape as ws-echo-client.ts.
 *
 * The work matches the agent's default Socket.IO echo (socketio driver, `target.socketio` with only
 * `transports: [websocket]` set):
 * - transport: websocket only, no polling first; one Engine.IO connection per socket (forceNew,
 *   no multiplexing), no reconnection, no compression (the target offers none);
 * - message: `emit("echo", <64-byte Buffer>)`, a binary event (one packet header frame plus one
 *   binary attachment frame each way), the buffer carrying an intended send time as the agent's does;
 * - reply: matched as the `echo` *event* the server emits back (socketio.ack false, the default),
 *   not an acknowledgement.
 *
 *   node --import tsx bench/baseline/socketio-echo-client.ts <url> <connections> <totalRate> <seconds>
 */
import { io, type Socket } from "socket.io-client";

const [url = "http://127.0.0.1:9002", connArg = "100", rateArg = "20000", secArg = "5"] = process.argv.slice(2);
const conns = Number(connArg),
  rate = Number(rateArg),
  seconds = Number(secArg);
const total = Math.round(rate * seconds);
const intervalMs = 1000 / rate;

const cpu0 = process.cpuUsage();
const sockets: Socket[] = [];
await Promise.all(
  Array.from(
    { length: conns },
    () =>
      new Promise<void>((resolve, reject) => {
        const socket = io(url, { transports: ["websocket"], forceNew: true, multiplex: false, reconnection: false });
        socket.once("connect", () => resolve());
        socket.once("connect_error", reject);
        sockets.push(socket);
      }),
  ),
);

let received = 0,
  sent = 0;
const done = new Promise<void>((resolve) => {
  for (const socket of sockets)
    socket.on("echo", () => {
      if (++received === total) resolve();
    });
});
const t0 = performance.now();
const loop = () => {
  const due = Math.min(total, Math.floor((performance.now() - t0) / intervalMs) + 1);
  while (sent < due) {
    const payload = Buffer.alloc(64);
    payload.writeDoubleBE(t0 + sent * intervalMs, 16); // an intended time, as a real client would carry
    sockets[sent % conns]!.emit("echo", payload);
    sent++;
  }
  if (sent < total) setTimeout(loop, 1);
};
loop();
await Promise.race([done, new Promise((r) => setTimeout(r, seconds * 1000 + 10_000))]);
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ sent, received, cpuSeconds: (cpu.user + cpu.system) / 1e6, wallSeconds: (performance.now() - t0) / 1000 })}\n`);
for (const socket of sockets) socket.disconnect();
process.exit(0);
