import { createServer, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import sockjs from "sockjs";
import { EchoHold, parseDelay } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { closeHttp, hostPort, listenHttp } from "./listen-http";
import { parseRoom, RoomHub } from "./room-hub";

export const SOCKJS_PREFIX = "/echo";
/** The room server: every session joins one room (`?room=<name>`, or `broadcast`), every message to everyone, the sender included. */
export const SOCKJS_BROADCAST_PREFIX = "/broadcast";
const BROADCAST_ROOM = "broadcast";

/** The connection's `?delay=`, the server default when absent, undefined when malformed. */
function delayOf(rawUrl: string | undefined, fallback: number): number | undefined {
  return parseDelay(new URL(rawUrl ?? "/", "http://x").searchParams.get("delay"), fallback);
}

/** The session's `?room=`: undefined when absent, null when malformed. */
function roomOf(rawUrl: string | undefined): string | undefined | null {
  return parseRoom(new URL(rawUrl ?? "/", "http://x").searchParams.get("room"));
}

/**
 * A SockJS echo at `/echo` (every transport sockjs-node offers): each message comes back
 * unchanged. `?delay=<ms>` on the URL overrides the server's delay for that session; a malformed
 * one is refused with HTTP 400 before SockJS sees the request, as the ws echo does. `?room=<name>`
 * joins a room: each message also goes at once to every other member, the echo keeps its hold.
 * `/broadcast` is the same server with every session in a room (the 2011 broadcast benchmark's).
 */
export async function startSockjsEchoServer(options: EchoServerOptions = {}): Promise<EchoServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const hold = new EchoHold(options.hold);
  const open = new Set<sockjs.Connection>();
  const rooms = new RoomHub<sockjs.Connection>();

  const serve = (defaultRoom: string | undefined) => (conn: sockjs.Connection | null) => {
    // sockjs-node emits null for a session that closed before it opened.
    if (!conn) return;
    open.add(conn);
    const replies = hold.queue<string>(delayOf(conn.url, delayMs) ?? delayMs, (msg) => {
      if (conn.readyState === 1) conn.write(msg);
    });
    const room = roomOf(conn.url) ?? defaultRoom;
    if (room !== undefined) rooms.join(room, conn);
    conn.on("data", (msg: string) => {
      if (room !== undefined) {
        rooms.publish(room, conn, (to) => {
          if (to.readyState === 1) to.write(msg);
        });
      }
      replies.push(msg);
    });
    conn.on("close", () => {
      open.delete(conn);
      if (room !== undefined) rooms.leave(room, conn);
      replies.dispose();
    });
  };

  const http = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  for (const [prefix, defaultRoom] of [
    [SOCKJS_PREFIX, undefined],
    [SOCKJS_BROADCAST_PREFIX, BROADCAST_ROOM],
  ] as const) {
    const sjs = sockjs.createServer({ prefix, log: () => {} });
    sjs.on("connection", serve(defaultRoom));
    sjs.installHandlers(http, { prefix });
  }

  // Put the delay check in front of SockJS's own request and upgrade handlers.
  for (const event of ["request", "upgrade"] as const) {
    const inner = http.listeners(event) as ((req: IncomingMessage, ...rest: unknown[]) => void)[];
    http.removeAllListeners(event);
    http.on(event, (req: IncomingMessage, resOrSocket: unknown, ...rest: unknown[]) => {
      if (delayOf(req.url, delayMs) !== undefined && roomOf(req.url) !== null) {
        for (const fn of inner) fn.call(http, req, resOrSocket, ...rest);
      } else if (event === "request") {
        const res = resOrSocket as import("node:http").ServerResponse;
        res.writeHead(400, { "content-type": "text/plain" });
        res.end("invalid delay or room: use ?delay=<ms> and ?room=<1 to 200 characters>\n");
      } else {
        (resOrSocket as Duplex).end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      }
    });
  }

  const actualPort = await listenHttp(http, port, host);

  return {
    port: actualPort,
    url: `http://${hostPort(host, actualPort)}${SOCKJS_PREFIX}`,
    stall: (ms: number) => hold.stall(ms),
    holdStats: () => hold.stats.summary(),
    resetHoldStats: () => hold.stats.reset(),
    connections: () => open.size,
    async close() {
      hold.clear();
      rooms.clear();
      for (const conn of open) conn.close();
      open.clear();
      await closeHttp(http);
    },
  };
}
