import { createServer } from "node:http";
import { Server as IoServer, type Namespace, type Socket } from "socket.io";
import { EchoHold, parseDelay } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { hostPort, listenHttp } from "./listen-http";

export const SOCKETIO_PATH = "/socket.io";

interface Reply {
  event: string;
  args: unknown[];
  ack: ((...args: unknown[]) => void) | undefined;
}

/**
 * A Socket.IO (v4) echo on every namespace: each event comes back with the same arguments, as an
 * event of the same name or, when the client asked for an acknowledgement, through the ack.
 * `?delay=<ms>` in the handshake query overrides the server's delay for that connection.
 */
export async function startSocketioEchoServer(options: EchoServerOptions = {}): Promise<EchoServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const hold = new EchoHold();
  const delays = new WeakMap<Socket, number>();

  // Socket.IO answers its own path and hands every other request to this handler.
  const http = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  // Defaults otherwise, so the target behaves as a stock server would; polling and websocket both on.
  const io = new IoServer(http, { path: SOCKETIO_PATH, serveClient: false, perMessageDeflate: false, httpCompression: false });

  const checkDelay = (socket: Socket, next: (err?: Error) => void) => {
    const raw = socket.handshake.query.delay;
    const delay = parseDelay(Array.isArray(raw) ? raw[0] : raw, delayMs);
    if (delay === undefined) return next(new Error(`invalid delay ${JSON.stringify(raw)}: use ?delay=<ms>`));
    delays.set(socket, delay);
    next();
  };

  const serve = (socket: Socket) => {
    const replies = hold.queue<Reply>(delays.get(socket) ?? delayMs, ({ event, args, ack }) => {
      if (!socket.connected) return;
      if (ack) ack(...args);
      else socket.emit(event, ...args);
    });
    socket.onAny((event: string, ...args: unknown[]) => {
      const last = args.at(-1);
      const ack = typeof last === "function" ? (args.pop() as Reply["ack"]) : undefined;
      replies.push({ event, args, ack });
    });
    socket.on("disconnect", () => replies.dispose());
  };

  // The main namespace and any other one a plan names (target.socketio.namespace).
  const namespaces: Namespace[] = [io.of("/"), io.of(/^\/.+$/) as unknown as Namespace];
  for (const nsp of namespaces) {
    nsp.use(checkDelay);
    nsp.on("connection", serve);
  }

  const actualPort = await listenHttp(http, port, host);

  return {
    port: actualPort,
    url: `http://${hostPort(host, actualPort)}`,
    stall: (ms: number) => hold.stall(ms),
    connections: () => io.engine.clientsCount,
    async close() {
      hold.clear();
      await new Promise<void>((resolve) => {
        void io.close(() => resolve());
        // Long-poll requests and upgraded sockets would otherwise hold http.close() open.
        http.closeAllConnections();
      });
    },
  };
}
