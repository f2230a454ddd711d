import { pack, unpack } from "msgpackr";
import type { TestApp, TestAppOptions } from "./app-http";
import { startIoApp } from "./io-app";

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
  const counters: SocketioMsgpackStats = { requests: 0, replies: 0, malformed: 0 };
  const stats = () => ({ ...counters });
  return startIoApp(options, { stats }, (io) =>
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
    }),
  );
}
