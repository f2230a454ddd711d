import { createServer } from "node:http";
import { pack, unpack } from "msgpackr";
import { Server as IoServer } from "socket.io";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import { sendJson, serveStats, type TestApp, type TestAppOptions } from "./app-http";

export interface SocketioMsgpackStats {
  /** `rpc` events whose argument was a binary attachment decoding as MessagePack `{ id, op, … }`. */
  requests: number;
  /** `result` events (or acknowledgements) sent, each one binary attachment of MessagePack. */
  replies: number;
  /** `rpc` events whose argument was not binary, or not a MessagePack request. */
  malformed: number;
}

/**
 * A Socket.IO 4 server whose events carry MessagePack as binary attachments (as apps that pack
 * their payloads themselves do): `rpc` with `{ id, op: "add", a, b }` is answered with a `result`
 * event `{ id, result: a + b, n }` (n: the server's reply count), or through the acknowledgement
 * when the emit asks for one. Counters at GET /stats.
 */
export async function startSocketioMsgpack(options: TestAppOptions = {}): Promise<TestApp<SocketioMsgpackStats>> {
  const { port = 0, host = "127.0.0.1" } = options;
  const counters: SocketioMsgpackStats = { requests: 0, replies: 0, malformed: 0 };
  const stats = () => ({ ...counters });
  const http = createServer((req, res) => {
    if (!serveStats(req, res, stats)) sendJson(res, 404, { error: `no route ${req.method} ${req.url}: connect Socket.IO, or GET /stats` });
  });
  const io = new IoServer(http, { serveClient: false });
  io.on("connection", (socket) => {
    socket.on("rpc", (data: unknown, ack?: unknown) => {
      let req: Record<string, unknown>;
      try {
        if (!Buffer.isBuffer(data)) throw new Error("not binary");
        req = unpack(data) as Record<string, unknown>;
        if (req === null || typeof req !== "object" || typeof req.id !== "string") throw new Error("not a request");
      } catch {
        return void counters.malformed++;
      }
      counters.requests++;
      const result = typeof req.a === "number" && typeof req.b === "number" ? req.a + req.b : null;
      const reply = pack({ id: req.id, result, n: ++counters.replies });
      if (typeof ack === "function") (ack as (r: Buffer) => void)(reply);
      else socket.emit("result", reply);
    });
  });
  const actualPort = await listenHttp(http, port, host);
  const httpUrl = `http://${hostPort(host, actualPort)}`;
  return {
    port: actualPort,
    url: httpUrl,
    httpUrl,
    stats,
    async close() {
      io.disconnectSockets(true);
      await new Promise<void>((resolve) => void io.close(() => resolve()));
      await closeHttp(http).catch(() => undefined);
    },
  };
}
