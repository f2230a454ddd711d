import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import sockjs from "sockjs";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import { StompBroker, type StompBrokerCounters, type StompSession } from "../stomp-broker";
import { serializeFrame } from "../stomp-frame";
import { asObject, idMaker, readJson, requiredString, sendError, sendJson, serveStats, HttpError, type TestApp, type TestAppOptions } from "./app-http";

/** Spring's `registry.addEndpoint("/ws").withSockJS()`: the SockJS endpoint (raw WebSocket at /ws/websocket). */
export const STOMP_CHAT_ENDPOINT = "/ws";
/** `@MessageMapping("/chat.send")` under the application prefix `/app`. */
export const STOMP_CHAT_SEND = "/app/chat.send";
/** `@SendTo("/topic/public")`: where every chat message is broadcast. */
export const STOMP_CHAT_TOPIC = "/topic/public";
/** `@SubscribeMapping("/chat.history")`: subscribing is answered at once with the latest chat messages (a JSON array). */
export const STOMP_CHAT_HISTORY = "/app/chat.history";
const HISTORY_LENGTH = 20;
/** Spring Security's form log-in, as JSON: `{ username, password }` → 204 with the session cookie. */
export const STOMP_CHAT_LOGIN = "/login";
/** `@SendToUser("/queue/errors")`: a message the handler could not take, told to its sender only. */
export const STOMP_CHAT_ERRORS = "/user/queue/errors";

export interface StompChatOptions extends TestAppOptions {
  /**
   * login → passcode; CONNECT without a matching pair is answered ERROR (Spring Security's refusal).
   * With `sessionCookie` these are POST /login's instead, and CONNECT is not checked (the HTTP session was). Absent: anyone.
   */
  users?: Record<string, string>;
  /** The broker's heart-beat interval both ways, in ms (Spring's setHeartbeatValue); 0: none. */
  heartbeatMs?: number;
  /**
   * `name=value`: the endpoint sits behind a log-in (Spring Security's `/ws/**` authenticated), so
   * every SockJS request (/info, each transport, each xhr send) and the websocket's upgrade must
   * carry this cookie, else 401. POST /login with one of `users` (anyone when absent) sets it. Absent: open.
   */
  sessionCookie?: string;
}

export interface StompChatStats extends StompBrokerCounters {
  /** Sessions that opened (SockJS or raw WebSocket). */
  sessions: number;
  /** SEND frames received, to any destination. */
  sends: number;
  /** Chat messages taken by /app/chat.send and broadcast to /topic/public (each once, to every subscriber). */
  broadcast: number;
  /** SENDs the app refused (not JSON `{ content }`, or no handler): answered on /user/queue/errors. */
  rejected: number;
  /** CONNECTs refused for bad credentials. */
  refused: number;
  /** SockJS HTTP requests and upgrades answered 401 for want of the session cookie. */
  unauthorized: number;
  /** POST /login answered with the session cookie. */
  logins: number;
}

/**
 * A chat as Spring's STOMP-over-SockJS guide builds one (a `/ws` endpoint with SockJS, an `/app`
 * application prefix and a simple broker on `/topic` and `/queue`): clients SEND JSON
 * `{ content, clientMsgId? }` to /app/chat.send and the server broadcasts its own JSON
 * `{ type: "CHAT", id, sender, content, clientMsgId, timestamp }` to every subscriber of
 * /topic/public, the sender included (the sender is CONNECT's login). A SEND straight to a
 * `/topic/…` or `/queue/…` destination goes through the simple broker unchanged. Every frame
 * asking for a receipt gets one; heart-beats are negotiated and kept both ways. A SUBSCRIBE to
 * /app/chat.history is answered at once (after its RECEIPT) with the latest messages, as a
 * @SubscribeMapping: a MESSAGE that can arrive with the RECEIPT. Counters at `GET /stats`.
 */
export async function startStompSockjsChat(options: StompChatOptions = {}): Promise<TestApp<StompChatStats>> {
  const { port = 0, host = "127.0.0.1", users, heartbeatMs = 10_000, sessionCookie } = options;
  const app = { sessions: 0, sends: 0, broadcast: 0, rejected: 0, refused: 0, unauthorized: 0, logins: 0 };
  const nextId = idMaker("msg");
  const history: unknown[] = [];

  const broker: StompBroker = new StompBroker({
    heartbeatMs,
    server: "volley-spring-like/1",
    authenticate(h) {
      if (!users || sessionCookie !== undefined) return undefined;
      if (h.login !== undefined && users[h.login] !== undefined && users[h.login] === h.passcode) return undefined;
      app.refused++;
      return `Bad credentials for login ${h.login ?? "(none)"}`;
    },
    onSend(session, frame, binary) {
      app.sends++;
      const destination = frame.headers.destination!;
      if (destination.startsWith("/topic/") || destination.startsWith("/queue/")) {
        broker.deliver(destination, frame.body, binary, frame.headers);
        return undefined;
      }
      if (destination !== STOMP_CHAT_SEND) return reject(session, `no @MessageMapping for ${destination}: SEND chat messages to ${STOMP_CHAT_SEND}`);
      let msg: { content?: unknown; clientMsgId?: unknown };
      try {
        msg = JSON.parse(frame.body.toString("utf8")) as typeof msg;
      } catch {
        msg = {};
      }
      if (typeof msg?.content !== "string") return reject(session, `${STOMP_CHAT_SEND} takes JSON { "content": "…" }`);
      app.broadcast++;
      const out = {
        type: "CHAT",
        id: nextId(),
        sender: session.login ?? "anonymous",
        content: msg.content,
        clientMsgId: msg.clientMsgId ?? null,
        timestamp: new Date().toISOString(),
      };
      history.push(out);
      if (history.length > HISTORY_LENGTH) history.shift();
      broker.deliver(STOMP_CHAT_TOPIC, Buffer.from(JSON.stringify(out)), false, { "content-type": "application/json" });
      return undefined;
    },
    onSubscribed(session, id, destination) {
      if (destination !== STOMP_CHAT_HISTORY) return;
      const headers = { destination, subscription: id, "message-id": nextId(), "content-type": "application/json" };
      broker.write(session, serializeFrame("MESSAGE", headers, Buffer.from(JSON.stringify(history))));
    },
  });

  /** The handler's refusal goes to the sender's /user/queue/errors subscriptions; the session stays open, as in Spring. */
  function reject(session: StompSession, error: string): undefined {
    app.rejected++;
    for (const [id, dest] of session.subs) {
      if (dest !== STOMP_CHAT_ERRORS) continue;
      const body = Buffer.from(JSON.stringify({ error }));
      broker.write(
        session,
        serializeFrame("MESSAGE", { destination: dest, subscription: id, "message-id": nextId(), "content-type": "application/json" }, body),
      );
    }
    return undefined;
  }

  const open = new Set<sockjs.Connection>();
  const endpoint = sockjs.createServer({ prefix: STOMP_CHAT_ENDPOINT, log: () => undefined });
  endpoint.on("connection", (conn: sockjs.Connection | null) => {
    if (!conn) return;
    app.sessions++;
    open.add(conn);
    const s = broker.open({
      write: (data) => void (conn.readyState === 1 && conn.write(data.toString("utf8"))),
      close: (code, reason) => conn.close(String(code === 1000 ? 1000 : 3000), reason),
    });
    conn.on("data", (text: string) => s.data(Buffer.from(text, "utf8"), false));
    conn.on("close", () => {
      open.delete(conn);
      s.closed();
    });
  });

  const stats = (): StompChatStats => ({ ...broker.counters, ...app });
  const login = async (req: IncomingMessage, res: ServerResponse) => {
    if (sessionCookie === undefined) throw new HttpError(404, "this chat takes no log-in: open the SockJS endpoint at /ws");
    const body = asObject(await readJson(req), `POST ${STOMP_CHAT_LOGIN}`);
    const username = requiredString(body, "username");
    const password = requiredString(body, "password");
    if (users && users[username] !== password) throw new HttpError(401, "bad credentials");
    app.logins++;
    res.writeHead(204, { "set-cookie": `${sessionCookie}; Path=/; HttpOnly` }).end();
  };
  const http = createServer((req, res) => {
    if (req.method === "POST" && new URL(req.url ?? "/", "http://x").pathname === STOMP_CHAT_LOGIN)
      return void login(req, res).catch((err) => sendError(res, err));
    if (!serveStats(req, res, stats))
      sendJson(res, 404, { error: `no route ${req.method} ${req.url}: STOMP over SockJS at ${STOMP_CHAT_ENDPOINT}, or GET /stats` });
  });
  endpoint.installHandlers(http);
  if (sessionCookie !== undefined) guard(http, sessionCookie, () => app.unauthorized++);
  const actualPort = await listenHttp(http, port, host);
  return {
    port: actualPort,
    url: `http://${hostPort(host, actualPort)}${STOMP_CHAT_ENDPOINT}`,
    httpUrl: `http://${hostPort(host, actualPort)}`,
    stats,
    async close() {
      broker.dispose();
      for (const c of open) c.close();
      await closeHttp(http);
    },
  };
}

/** Puts a session-cookie check in front of SockJS's own request and upgrade handlers (only the endpoint's paths). */
function guard(http: import("node:http").Server, cookie: string, counted: () => void): void {
  const allowed = (req: IncomingMessage) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path !== STOMP_CHAT_ENDPOINT && !path.startsWith(`${STOMP_CHAT_ENDPOINT}/`)) return true;
    const sent = (req.headers.cookie ?? "").split(";").map((c) => c.trim());
    if (sent.includes(cookie)) return true;
    counted();
    return false;
  };
  const requests = http.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
  const upgrades = http.listeners("upgrade") as ((req: IncomingMessage, socket: Duplex, head: Buffer) => void)[];
  http.removeAllListeners("request");
  http.removeAllListeners("upgrade");
  http.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (!allowed(req)) return sendJson(res, 401, { error: "log in first: the SockJS endpoint wants the session cookie" });
    for (const fn of requests) fn.call(http, req, res);
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!allowed(req)) return void socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    for (const fn of upgrades) fn.call(http, req, socket, head);
  });
}
