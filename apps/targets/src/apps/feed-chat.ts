import { createServer, type ServerResponse } from "node:http";
import { WebSocketServer, type WebSocket } from "ws";
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

/** `:room` is 1 to 60 letters, digits, _ or -. */
export const FEED_CHAT_PATHS = { messages: "/api/rooms/:room/messages", events: "/api/rooms/:room/events", socket: "/ws" } as const;
export const FEED_CHAT_EVENT = "message";

export interface FeedChatOptions extends TestAppOptions {
  /**
   * End every event stream once it has delivered this many messages, as a server that rotates its
   * streams does (clients reconnect for the next); absent: never.
   */
  endStreamsAfter?: number;
}

export interface FeedChatStats {
  /** Accepted `POST /api/rooms/:room/messages`. */
  posts: number;
  /** Event streams opened, and the ones still open. */
  streams: number;
  activeStreams: number;
  /** Streams the server ended itself (endStreamsAfter). */
  streamsEnded: number;
  /** WebSockets opened, and the ones still open. */
  sockets: number;
  activeSockets: number;
  /** Messages written to event streams and to sockets, summed over receivers. */
  streamDeliveries: number;
  socketDeliveries: number;
  /** `{ type: "history" }` requests answered on a socket. */
  historyRequests: number;
  /** Socket frames refused (not JSON, unknown type). */
  errors: number;
}

export interface FeedChatMessage {
  id: string;
  room: string;
  text: string;
  clientMsgId: string | null;
  ts: number;
}

const ROOM = /^\/api\/rooms\/([A-Za-z0-9_-]{1,60})\/(messages|events)$/;

/**
 * A chat app of the kind that serves the same room three ways: `POST /api/rooms/:room/messages`
 * JSON `{ text, clientMsgId? }` → 201 `{ id, room, delivered }`; `GET /api/rooms/:room/events`
 * (text/event-stream) sends `event: message` with `id:` and JSON data `{ id, room, text,
 * clientMsgId, ts }` for each message posted after it opened; and a WebSocket at `/ws?room=` gets
 * `{ type: "message", message }` for the same messages and answers `{ type: "history", requestId,
 * limit? }` with `{ type: "history", requestId, messages }` (the room's latest, up to 50). Its
 * counters say what it accepted and delivered, for a load test to be checked against.
 */
export async function startFeedChat(options: FeedChatOptions = {}): Promise<TestApp<FeedChatStats>> {
  const { port = 0, host = "127.0.0.1", endStreamsAfter } = options;
  const counters: FeedChatStats = {
    posts: 0,
    streams: 0,
    activeStreams: 0,
    streamsEnded: 0,
    sockets: 0,
    activeSockets: 0,
    streamDeliveries: 0,
    socketDeliveries: 0,
    historyRequests: 0,
    errors: 0,
  };
  const stats = () => ({ ...counters });
  const streams = new Map<string, Set<ServerResponse>>();
  /** Messages each open stream has delivered. */
  const written = new Map<ServerResponse, number>();
  const sockets = new Map<string, Set<WebSocket>>();
  const history = new Map<string, FeedChatMessage[]>();
  const ids = idMaker("msg");
  const member = <T>(rooms: Map<string, Set<T>>, room: string) => rooms.get(room) ?? rooms.set(room, new Set()).get(room)!;

  const keepalive = setInterval(() => {
    for (const set of streams.values()) for (const res of set) res.write(": keepalive\n\n");
  }, 15_000);
  keepalive.unref();

  const post = (room: string, text: string, clientMsgId: string | null): { message: FeedChatMessage; delivered: number } => {
    const message: FeedChatMessage = { id: ids(), room, text, clientMsgId, ts: Date.now() };
    const kept = history.get(room) ?? history.set(room, []).get(room)!;
    kept.push(message);
    if (kept.length > 50) kept.shift();
    counters.posts++;
    let delivered = 0;
    const frame = `id: ${message.id}\nevent: ${FEED_CHAT_EVENT}\ndata: ${JSON.stringify(message)}\n\n`;
    for (const res of streams.get(room) ?? []) {
      res.write(frame);
      counters.streamDeliveries++;
      delivered++;
      const n = (written.get(res) ?? 0) + 1;
      written.set(res, n);
      if (endStreamsAfter !== undefined && n >= endStreamsAfter) {
        counters.streamsEnded++;
        streams.get(room)!.delete(res);
        counters.activeStreams--;
        res.end();
      }
    }
    const pushed = JSON.stringify({ type: "message", message });
    for (const ws of sockets.get(room) ?? []) {
      ws.send(pushed);
      counters.socketDeliveries++;
      delivered++;
    }
    return { message, delivered };
  };

  const http = createServer((req, res) => {
    if (serveStats(req, res, stats)) return;
    const url = new URL(req.url ?? "/", "http://x");
    const m = ROOM.exec(url.pathname);
    if (m?.[2] === "events" && req.method === "GET") {
      const room = m[1]!;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      res.write(": connected\n\n");
      const set = member(streams, room);
      set.add(res);
      counters.streams++;
      counters.activeStreams++;
      res.on("close", () => {
        written.delete(res);
        if (set.delete(res)) counters.activeStreams--;
      });
      return;
    }
    if (m?.[2] === "messages" && req.method === "POST") {
      void readJson(req)
        .then((raw) => {
          const body = asObject(raw, `POST ${url.pathname}`);
          const { message, delivered } = post(m[1]!, requiredString(body, "text"), optionalString(body, "clientMsgId") ?? null);
          sendJson(res, 201, { id: message.id, room: message.room, delivered });
        })
        .catch((err: unknown) => sendError(res, err));
      return;
    }
    sendError(
      res,
      new HttpError(
        m ? 405 : 404,
        `use POST ${FEED_CHAT_PATHS.messages}, GET ${FEED_CHAT_PATHS.events}, a WebSocket at ${FEED_CHAT_PATHS.socket}?room=, or GET /stats`,
      ),
    );
  });

  const wss = new WebSocketServer({ server: http, path: FEED_CHAT_PATHS.socket, perMessageDeflate: false });
  wss.on("connection", (ws, req) => {
    ws.on("error", () => undefined);
    const room = new URL(req.url ?? "/", "http://x").searchParams.get("room") ?? "lobby";
    const set = member(sockets, room);
    set.add(ws);
    counters.sockets++;
    counters.activeSockets++;
    ws.on("close", () => {
      if (set.delete(ws)) counters.activeSockets--;
    });
    ws.on("message", (data) => {
      let frame: { type?: unknown; requestId?: unknown; limit?: unknown };
      try {
        frame = JSON.parse(data.toString()) as typeof frame;
      } catch {
        counters.errors++;
        return ws.send(JSON.stringify({ type: "error", error: "frames are JSON objects" }));
      }
      if (frame.type !== "history") {
        counters.errors++;
        return ws.send(JSON.stringify({ type: "error", error: `unknown type ${JSON.stringify(frame.type)}: send { type: "history", requestId }` }));
      }
      counters.historyRequests++;
      const limit = typeof frame.limit === "number" && frame.limit > 0 ? Math.min(frame.limit, 50) : 50;
      ws.send(JSON.stringify({ type: "history", requestId: frame.requestId ?? null, messages: (history.get(room) ?? []).slice(-limit) }));
    });
  });

  const actualPort = await listenHttp(http, port, host);
  const httpUrl = `http://${hostPort(host, actualPort)}`;
  return {
    port: actualPort,
    url: `ws://${hostPort(host, actualPort)}${FEED_CHAT_PATHS.socket}`,
    httpUrl,
    stats,
    async close() {
      clearInterval(keepalive);
      for (const set of streams.values()) for (const res of set) res.destroy();
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await closeHttp(http);
    },
  };
}
