import { createServer, type Server as HttpServer } from "node:http";
import { EchoHold, parseDelay } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { hostPort, listenHttp } from "./listen-http";
import { RoomHub } from "./room-hub";

export const SOCKETIO_PATH = "/socket.io";
/** `emit("join", room, ack)` puts the socket in `room` and acknowledges once it is in. */
export const SOCKETIO_JOIN_EVENT = "join";
/** `emit("ping", anything, ack)` is acknowledged with `{ count }`, the connection's pings so far. */
export const SOCKETIO_PING_EVENT = "ping";

/** What the echo needs of a server-side socket; Socket.IO v2, v3 and v4 all have it. */
export interface EchoIoSocket {
  readonly connected: boolean;
  readonly handshake: { query: Record<string, unknown> };
  emit(event: string, ...args: unknown[]): unknown;
  on(event: "disconnect", listener: () => void): unknown;
}

interface EchoIoNamespace<S extends EchoIoSocket> {
  use(fn: (socket: S, next: (err?: Error) => void) => void): unknown;
  on(event: "connection", listener: (socket: S) => void): unknown;
}

/** What the echo needs of a Socket.IO server; the version's own object, seen through this slice. */
export interface EchoIoServer<S extends EchoIoSocket> {
  of(nsp: string | RegExp): EchoIoNamespace<S>;
  engine: { clientsCount: number };
  close(cb?: (err?: Error) => void): unknown;
}

/** The differences between Socket.IO majors that the echo meets. */
export interface SocketioFlavor<S extends EchoIoSocket> {
  /** The version's server on `http`, at SOCKETIO_PATH, with the reference options. */
  attach(http: HttpServer): EchoIoServer<S>;
  /** Calls `cb` for each event the client emits, in arrival order, the ack function last when it asked for one. */
  onAnyEvent(socket: S, cb: (event: string, args: unknown[]) => void): void;
}

/**
 * The reference options every version is started with: stock defaults, but no compression and no
 * client bundle. A new object per server: v2 writes into the one it is given (`initialPacket`),
 * which would turn a later v3 or v4 server into one that answers like v2.
 */
export function socketioServerOptions() {
  return { path: SOCKETIO_PATH, serveClient: false, perMessageDeflate: false, httpCompression: false };
}

interface Reply {
  event: string;
  args: unknown[];
  ack: ((...args: unknown[]) => void) | undefined;
}

/**
 * The Socket.IO echo every version's target runs, on every namespace: each event comes back with
 * the same arguments, as an event of the same name or, when the client asked for an
 * acknowledgement, through the ack. `?delay=<ms>` in the handshake query overrides the server's
 * delay for that connection; a malformed one is refused at the namespace connect. `join` (room
 * name, ack) enters a room: from then on each event also goes at once to every other member, as
 * the same event, while the sender's own copy (event or ack) keeps the echo's hold. `ping` with an
 * ack is answered `{ count }` (pings on this connection so far), also after the hold.
 */
export async function startSocketioEcho<S extends EchoIoSocket>(flavor: SocketioFlavor<S>, options: EchoServerOptions = {}): Promise<EchoServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const hold = new EchoHold(options.hold);
  const delays = new WeakMap<S, number>();
  // Rooms kept here rather than in Socket.IO's adapter: v2's and v4's room APIs differ.
  const rooms = new RoomHub<S>();

  // Socket.IO answers its own path and hands every other request to this handler.
  const http = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  const io = flavor.attach(http);

  const checkDelay = (socket: S, next: (err?: Error) => void) => {
    const raw = socket.handshake.query.delay;
    const first: unknown = Array.isArray(raw) ? raw[0] : raw;
    const delay = parseDelay(typeof first === "string" ? first : undefined, delayMs);
    if (delay === undefined) return next(new Error(`invalid delay ${JSON.stringify(raw)}: use ?delay=<ms>`));
    delays.set(socket, delay);
    next();
  };

  const serve = (socket: S) => {
    const replies = hold.queue<Reply>(delays.get(socket) ?? delayMs, ({ event, args, ack }) => {
      if (!socket.connected) return;
      if (ack) ack(...args);
      else socket.emit(event, ...args);
    });
    let room: string | undefined;
    let pings = 0;
    flavor.onAnyEvent(socket, (event, args) => {
      const last = args.at(-1);
      const ack = typeof last === "function" ? (args.pop() as Reply["ack"]) : undefined;
      if (event === SOCKETIO_JOIN_EVENT) {
        const name = args[0];
        if (typeof name !== "string" || name.length === 0 || name.length > 200) return ack?.({ error: "join needs a room name of 1 to 200 characters" });
        if (room !== undefined) rooms.leave(room, socket);
        rooms.join((room = name), socket);
        return ack?.({ ok: true });
      }
      // The SocketCluster ping-throughput benchmark's server: `ping` is answered `{count}` through the ack.
      if (event === SOCKETIO_PING_EVENT && ack) return replies.push({ event, args: [{ count: ++pings }], ack });
      if (room !== undefined) rooms.publish(room, socket, (to) => to.connected && to.emit(event, ...args));
      replies.push({ event, args, ack });
    });
    socket.on("disconnect", () => {
      if (room !== undefined) rooms.leave(room, socket);
      replies.dispose();
    });
  };

  // The main namespace and any other one a plan names (target.socketio.namespace).
  for (const nsp of [io.of("/"), io.of(/^\/.+$/)]) {
    nsp.use(checkDelay);
    nsp.on("connection", serve);
  }

  const actualPort = await listenHttp(http, port, host);

  return {
    port: actualPort,
    url: `http://${hostPort(host, actualPort)}`,
    stall: (ms: number) => hold.stall(ms),
    holdStats: () => hold.stats.summary(),
    resetHoldStats: () => hold.stats.reset(),
    connections: () => io.engine.clientsCount,
    async close() {
      hold.clear();
      rooms.clear();
      await new Promise<void>((resolve) => {
        io.close(() => resolve());
        // Long-poll requests and upgraded sockets would otherwise hold http.close() open.
        http.closeAllConnections();
      });
    },
  };
}
