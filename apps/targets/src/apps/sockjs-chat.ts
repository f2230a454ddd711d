import { createServer } from "node:http";
import sockjs from "sockjs";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import { sendJson, serveStats, type TestApp, type TestAppOptions } from "./app-http";

export const SOCKJS_CHAT_PREFIX = "/chat";

export interface SockjsChatStats {
  /** Sessions that opened. */
  sessions: number;
  /** Chat messages received: text frames of JSON `{ type: "chat", text, clientMsgId? }`. */
  messages: number;
  /** Chat messages written to sessions (each message once to every open session, the sender included). */
  delivered: number;
  /** Frames that were not a chat message (not JSON, or another shape); answered with a `{ type: "error" }` to the sender. */
  rejected: number;
}

/**
 * A SockJS chat room as sockjs-node's own broadcast example builds one: one room, every session's
 * chat message written to every open session as JSON `{ type: "chat", id, from, text, clientMsgId }`
 * (the server's own message id and the sender's session id added), in plain text frames, on every
 * transport sockjs-node serves; on opening, a session is greeted with `{ type: "welcome", you }`.
 * It speaks its own JSON, nothing of Volley's: a client that base64-encodes its frames is rejected.
 */
export async function startSockjsChat(options: TestAppOptions = {}): Promise<TestApp<SockjsChatStats>> {
  const { port = 0, host = "127.0.0.1" } = options;
  const counters: SockjsChatStats = { sessions: 0, messages: 0, delivered: 0, rejected: 0 };
  const stats = () => ({ ...counters });
  const open = new Set<sockjs.Connection>();
  let nextId = 1;

  const chat = sockjs.createServer({ prefix: SOCKJS_CHAT_PREFIX, log: () => undefined });
  chat.on("connection", (conn: sockjs.Connection | null) => {
    if (!conn) return;
    counters.sessions++;
    open.add(conn);
    conn.write(JSON.stringify({ type: "welcome", you: conn.id }));
    conn.on("data", (text: string) => {
      let msg: { type?: unknown; text?: unknown; clientMsgId?: unknown };
      try {
        msg = JSON.parse(text) as typeof msg;
      } catch {
        msg = {};
      }
      if (msg?.type !== "chat" || typeof msg.text !== "string") {
        counters.rejected++;
        conn.write(JSON.stringify({ type: "error", error: 'send JSON { "type": "chat", "text": "…" }' }));
        return;
      }
      counters.messages++;
      const out = JSON.stringify({ type: "chat", id: nextId++, from: conn.id, text: msg.text, clientMsgId: msg.clientMsgId ?? null });
      for (const to of open) {
        if (to.readyState !== 1) continue;
        to.write(out);
        counters.delivered++;
      }
    });
    conn.on("close", () => open.delete(conn));
  });

  const http = createServer((req, res) => {
    if (!serveStats(req, res, stats))
      sendJson(res, 404, { error: `no route ${req.method} ${req.url}: open a SockJS session at ${SOCKJS_CHAT_PREFIX}, or GET /stats` });
  });
  chat.installHandlers(http);
  const actualPort = await listenHttp(http, port, host);
  return {
    port: actualPort,
    url: `http://${hostPort(host, actualPort)}${SOCKJS_CHAT_PREFIX}`,
    httpUrl: `http://${hostPort(host, actualPort)}`,
    stats,
    async close() {
      for (const c of open) c.close();
      await closeHttp(http);
    },
  };
}
