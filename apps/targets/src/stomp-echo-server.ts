import { createServer, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import sockjs from "sockjs";
import { WebSocketServer, type RawData } from "ws";
import { EchoHold, parseDelay, type HoldQueue } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { closeHttp, hostPort, listenHttp } from "./listen-http";
import { StompBroker, type StompLink, type StompSession } from "./stomp-broker";

export const STOMP_PATH = "/stomp";
/** The same broker over SockJS (every transport sockjs-node serves): STOMP frames as SockJS text messages. */
export const STOMP_SOCKJS_PREFIX = "/sockjs";
/** SEND here with a `reply-to` header: the body comes back, held, to that destination. */
export const STOMP_ECHO_DESTINATION = "/queue/echo";
/** `/topic/<room>`: a message reaches every OTHER subscriber (group semantics, as RoomHub). */
export const STOMP_ROOM_PREFIX = "/topic/";
/** The shortest heart-beat interval the broker sends or asks for, in ms. */
const HEARTBEAT_MS = 100;

type Reply = { to: string; body: Buffer; binary: boolean; headers: Record<string, string> };

export interface StompEchoServer extends EchoServer {
  /** The SockJS endpoint of the same broker (http://…/sockjs). */
  sockjsUrl: string;
}

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** The connection's `?delay=`, the server default when absent, undefined when malformed. */
function delayOf(rawUrl: string | undefined, fallback: number): number | undefined {
  return parseDelay(new URL(rawUrl ?? "/", "http://x").searchParams.get("delay"), fallback);
}

/**
 * A small STOMP 1.2 broker (stomp-broker.ts) over WebSocket at `/stomp` (subprotocols v12.stomp,
 * v11.stomp, v10.stomp) and over SockJS at `/sockjs`. Two reference behaviours on top:
 * `/queue/echo` with `reply-to` is the exact-hold echo (per connection, `?delay=<ms>`), and
 * `/topic/<room>` delivers to every subscriber but the sender.
 */
export async function startStompEchoServer(options: EchoServerOptions = {}): Promise<StompEchoServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const hold = new EchoHold(options.hold);
  const replies = new Map<StompSession, HoldQueue<Reply>>();
  const broker: StompBroker = new StompBroker({
    heartbeatMs: HEARTBEAT_MS,
    server: "volley-stomp/1",
    onSend(session, frame, binary) {
      const h = frame.headers;
      const destination = h.destination!;
      if (destination === STOMP_ECHO_DESTINATION) {
        if (!h["reply-to"]) return `SEND to ${STOMP_ECHO_DESTINATION} needs a reply-to header`;
        replies.get(session)?.push({ to: h["reply-to"], body: frame.body, binary, headers: h });
        return undefined;
      }
      broker.deliver(destination, frame.body, binary, h, destination.startsWith(STOMP_ROOM_PREFIX) ? session : undefined);
      return undefined;
    },
    onClose(session) {
      replies.get(session)?.dispose();
      replies.delete(session);
    },
  });

  /** A session on `link` whose echoes are held `delay` ms. */
  function serve(link: StompLink, delay: number) {
    const s = broker.open(link);
    replies.set(
      s.session,
      hold.queue(delay, ({ to, body, binary, headers }: Reply) => broker.deliver(to, body, binary, headers)),
    );
    return s;
  }

  const http = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: (offered) => ["v12.stomp", "v11.stomp", "v10.stomp"].find((p) => offered.has(p)) ?? false,
  });

  const sjs = sockjs.createServer({ prefix: STOMP_SOCKJS_PREFIX, log: () => {} });
  const sockjsSessions = new Set<sockjs.Connection>();
  sjs.on("connection", (conn: sockjs.Connection | null) => {
    // sockjs-node emits null for a session that closed before it opened.
    if (!conn) return;
    sockjsSessions.add(conn);
    // SockJS carries text only: frames go as UTF-8 text whatever their body.
    const s = serve(
      {
        write: (data) => void (conn.readyState === 1 && conn.write(data.toString("utf8"))),
        close: (code, reason) => conn.close(String(code === 1000 ? 1000 : 3000), reason),
      },
      delayOf(conn.url, delayMs) ?? delayMs,
    );
    conn.on("data", (text: string) => s.data(Buffer.from(text, "utf8"), false));
    conn.on("close", () => {
      sockjsSessions.delete(conn);
      s.closed();
    });
  });
  sjs.installHandlers(http, { prefix: STOMP_SOCKJS_PREFIX });

  // In front of SockJS's own handlers: the WebSocket endpoint, and the delay check for both.
  const sockjsUpgrade = http.listeners("upgrade") as ((req: IncomingMessage, socket: Duplex, head: Buffer) => void)[];
  const sockjsRequest = http.listeners("request") as ((req: IncomingMessage, res: import("node:http").ServerResponse) => void)[];
  http.removeAllListeners("upgrade");
  http.removeAllListeners("request");
  http.on("request", (req, res) => {
    if (delayOf(req.url, delayMs) === undefined) return void res.writeHead(400, { "content-type": "text/plain" }).end("invalid delay: use ?delay=<ms>\n");
    for (const fn of sockjsRequest) fn.call(http, req, res);
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://x");
    const delay = delayOf(req.url, delayMs);
    if (delay === undefined) return rejectUpgrade(socket, 400, "Bad Request");
    if (url.pathname.startsWith(`${STOMP_SOCKJS_PREFIX}/`)) {
      for (const fn of sockjsUpgrade) fn.call(http, req, socket, head);
      return;
    }
    if (url.pathname !== STOMP_PATH) return rejectUpgrade(socket, 404, "Not Found");
    wss.handleUpgrade(req, socket, head, (ws) => {
      const s = serve(
        {
          write: (data, binary) => void (ws.readyState === ws.OPEN && ws.send(data, { binary })),
          close: (code, reason) => ws.close(code, reason),
        },
        delay,
      );
      ws.on("error", () => ws.terminate());
      ws.on("message", (data: RawData, isBinary: boolean) => s.data(data as Buffer, isBinary));
      ws.on("close", () => s.closed());
    });
  });

  const actualPort = await listenHttp(http, port, host);

  return {
    port: actualPort,
    url: `ws://${hostPort(host, actualPort)}${STOMP_PATH}`,
    sockjsUrl: `http://${hostPort(host, actualPort)}${STOMP_SOCKJS_PREFIX}`,
    stall: (ms: number) => hold.stall(ms),
    holdStats: () => hold.stats.summary(),
    resetHoldStats: () => hold.stats.reset(),
    connections: () => broker.sessions.size,
    async close() {
      hold.clear();
      broker.dispose();
      for (const ws of wss.clients) ws.terminate();
      for (const conn of sockjsSessions) conn.close();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await closeHttp(http);
    },
  };
}
