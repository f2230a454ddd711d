import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { Server as IoServer } from "socket.io";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import {
  asObject,
  HttpError,
  idMaker,
  optionalString,
  readJson,
  requiredString,
  sendError,
  sendJson,
  serveStats,
  type TestApp,
  type TestAppOptions,
} from "./app-http";

export const SOCKETIO_CHAT_LOGIN_PATH = "/login";

export interface SocketioChatStats {
  /** Successful `POST /login`s. */
  logins: number;
  /** Socket.IO connections accepted (past the auth check). */
  connections: number;
  /** Handshakes refused with connect_error "unauthorized". */
  authFailures: number;
  /** `join` events that put a socket in a room. */
  joins: number;
  /** `chat` events accepted from a room member. */
  chatsReceived: number;
  /** `message` events sent, summed over the receivers (one chat to a room of 5 counts 5). */
  messagesDelivered: number;
}

export interface ChatMessage {
  id: string;
  room: string;
  user: string;
  text: string;
  ts: number;
  clientMsgId?: string;
}

interface Session {
  user: string;
  userId: string;
}

/**
 * A Socket.IO v4 chat as apps write them, not an echo: `POST /login` `{ user }` → `{ token, userId }`;
 * the socket sends the token in the handshake `auth: { token }` (anything else: connect_error
 * "unauthorized"); `join` `{ room }` has NO acknowledgement, the server answers with `joined`
 * `{ room, members }` (the room's connection count); `chat` `{ room, text, clientMsgId? }` from a
 * member is broadcast to the whole room, the sender included, as `message` `{ id, room, user, text,
 * ts, clientMsgId? }` with a server-made id and the server's epoch ms. A chat sent with an
 * acknowledgement callback is also acknowledged with `{ id }`; a chat to a room the socket has not
 * joined gets `chat_error` `{ room, error }` and is not counted.
 */
export async function startSocketioChat(options: TestAppOptions = {}): Promise<TestApp<SocketioChatStats>> {
  const { port = 0, host = "127.0.0.1" } = options;
  const counters: SocketioChatStats = { logins: 0, connections: 0, authFailures: 0, joins: 0, chatsReceived: 0, messagesDelivered: 0 };
  const stats = () => ({ ...counters });
  const sessions = new Map<string, Session>();
  const userIds = idMaker("u");
  const messageIds = idMaker("m");

  const http = createServer((req, res) => {
    if (serveStats(req, res, stats)) return;
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path !== SOCKETIO_CHAT_LOGIN_PATH) return sendJson(res, 404, { error: `no route ${req.method} ${path}: use POST /login or GET /stats` });
    if (req.method !== "POST") return sendJson(res, 405, { error: "use POST /login with JSON { user }" });
    void readJson(req)
      .then((body) => {
        const user = requiredString(asObject(body, "POST /login"), "user");
        const token = randomBytes(16).toString("hex");
        const session = { user, userId: userIds() };
        sessions.set(token, session);
        counters.logins++;
        sendJson(res, 200, { token, userId: session.userId });
      })
      .catch((err: unknown) => sendError(res, err));
  });

  const io = new IoServer(http, { serveClient: false, cors: { origin: "*" } });
  io.use((socket, next) => {
    const token: unknown = (socket.handshake.auth as Record<string, unknown> | undefined)?.token;
    const session = typeof token === "string" ? sessions.get(token) : undefined;
    if (!session) {
      counters.authFailures++;
      return next(new Error("unauthorized"));
    }
    socket.data = session;
    next();
  });

  const roomOf = (data: unknown): string | undefined => {
    if (typeof data !== "object" || data === null) return undefined;
    const room = (data as Record<string, unknown>).room;
    return typeof room === "string" && room !== "" ? room : undefined;
  };
  const roomSize = (room: string) => io.sockets.adapter.rooms.get(room)?.size ?? 0;

  io.on("connection", (socket) => {
    counters.connections++;
    const session = socket.data as Session;
    socket.on("join", (data: unknown) => {
      const room = roomOf(data);
      if (room === undefined) return void socket.emit("join_error", { error: "join takes { room: <non-empty string> }" });
      void socket.join(room);
      counters.joins++;
      socket.emit("joined", { room, members: roomSize(room) });
    });
    socket.on("chat", (data: unknown, ack?: unknown) => {
      const room = roomOf(data);
      const fields = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
      let text: string;
      let clientMsgId: string | undefined;
      try {
        if (room === undefined) throw new HttpError(400, "chat takes { room, text, clientMsgId? }: room is missing");
        if (!socket.rooms.has(room)) throw new HttpError(403, `not in room ${room}: emit join { room } first`);
        text = requiredString(fields, "text");
        clientMsgId = optionalString(fields, "clientMsgId");
      } catch (err) {
        return void socket.emit("chat_error", { room: room ?? null, error: (err as Error).message });
      }
      counters.chatsReceived++;
      const message: ChatMessage = { id: messageIds(), room, user: session.user, text, ts: Date.now(), ...(clientMsgId !== undefined ? { clientMsgId } : {}) };
      counters.messagesDelivered += roomSize(room);
      io.to(room).emit("message", message);
      if (typeof ack === "function") (ack as (r: unknown) => void)({ id: message.id });
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
