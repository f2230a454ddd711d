import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { EchoHold, parseDelay } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { closeHttp, hostPort, listenHttp } from "./listen-http";
import { parseRoom, RoomHub } from "./room-hub";

export type WsEchoServerOptions = EchoServerOptions;
/** url is ws://host:port/echo; the other routes are under WS_PATHS. */
export type WsEchoServer = EchoServer;

export const ECHO_PATH = "/echo";

/**
 * The raw WebSocket reference routes, one per built-in template:
 * - `/echo`: every frame comes back unchanged; `?room=<name>` also sends it to the room's other members.
 * - `/ping`: the SocketCluster benchmarks' ping server. The pong is the ping itself, unchanged:
 *   raw WebSocket has no acknowledgement to carry `{count}` beside the message, and a load
 *   client matches each reply by the message's own bytes. A text frame `ping` (a person with
 *   wscat) is answered `{"count":<pings on this connection so far>}` instead.
 * - `/broadcast`: one room, every message to everyone, the sender included (the 2011 benchmark);
 *   the room is `?room=<name>`, or `broadcast` when the URL names none.
 * - `/group`: `?room=<group>` is required; a message goes to the group's other members only, no
 *   copy back to the sender (location sharing).
 */
export const WS_PATHS = { echo: ECHO_PATH, ping: "/ping", broadcast: "/broadcast", group: "/group" } as const;
/** The room a `/broadcast` connection joins when its URL names none. */
export const WS_BROADCAST_ROOM = "broadcast";

/**
 * Plain HTTP on the same port: GET answers `{ hold: HoldSummary }`, the holds this server actually
 * applied (arrival to send call) since it started or was reset; DELETE resets them. Lets a latency
 * bench print the target's true hold beside what the load generator reported.
 */
export const WS_STATS_PATH = "/stats";

type Route = "echo" | "ping" | "broadcast" | "group";
const ROUTES = new Map<string, Route>(Object.entries(WS_PATHS).map(([route, path]) => [path, route as Route]));

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/**
 * The raw WebSocket reference server (routes: WS_PATHS). Every sender's own copy keeps the echo's
 * exact hold (`?delay=<ms>`, stall()); other members' copies go at once.
 */
export async function startWsEchoServer(options: WsEchoServerOptions = {}): Promise<WsEchoServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const hold = new EchoHold(options.hold);
  const rooms = new RoomHub<WebSocket>();

  const http = createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    if (pathname === WS_STATS_PATH) return serveStats(req.method, res);
    const known = ROUTES.has(pathname);
    res.writeHead(known ? 426 : 404, { "content-type": "text/plain" });
    res.end(known ? "use a WebSocket client\n" : "not found\n");
  });
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

  function serveStats(method: string | undefined, res: ServerResponse): void {
    if (method === "DELETE") {
      hold.stats.reset();
      res.writeHead(204).end();
    } else if (method === "GET") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ hold: hold.stats.summary(), buckets: hold.stats.buckets() }));
    } else {
      res
        .writeHead(405, { allow: "GET, DELETE", "content-type": "text/plain" })
        .end("GET reads the hold stats (summary, and buckets as [fromUs, toUs, count]), DELETE resets them\n");
    }
  }

  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://x");
    const route = ROUTES.get(url.pathname);
    if (route === undefined) return rejectUpgrade(socket, 404, "Not Found");
    const delay = parseDelay(url.searchParams.get("delay"), delayMs);
    let room = parseRoom(url.searchParams.get("room"));
    if (route === "broadcast") room ??= WS_BROADCAST_ROOM;
    // A group server without a group would be an echo, a ping server in a room not one: refuse both.
    const misrouted = (route === "group" && room === undefined) || (route === "ping" && room !== undefined);
    if (delay === undefined || room === null || misrouted) return rejectUpgrade(socket, 400, "Bad Request");
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, route, delay, room));
  });

  function serve(ws: WebSocket, route: Route, delay: number, room: string | undefined): void {
    // A client that vanishes mid-send must not take the server down with it.
    ws.on("error", () => ws.terminate());
    const replies = hold.queue<{ data: RawData | string; isBinary: boolean }>(delay, ({ data, isBinary }) => {
      if (ws.readyState === ws.OPEN) ws.send(data, { binary: isBinary });
    });
    let pings = 0;
    if (room !== undefined) rooms.join(room, ws);
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (room !== undefined) {
        rooms.publish(room, ws, (to) => {
          if (to.readyState === to.OPEN) to.send(data, { binary: isBinary });
        });
      }
      if (route === "group") return;
      pings++;
      if (route === "ping" && !isBinary && data.toString() === "ping") return replies.push({ data: JSON.stringify({ count: pings }), isBinary: false });
      replies.push({ data, isBinary });
    });
    ws.on("close", () => {
      if (room !== undefined) rooms.leave(room, ws);
      replies.dispose();
    });
  }

  const actualPort = await listenHttp(http, port, host);

  return {
    port: actualPort,
    url: `ws://${hostPort(host, actualPort)}${ECHO_PATH}`,
    stall: (ms: number) => hold.stall(ms),
    holdStats: () => hold.stats.summary(),
    resetHoldStats: () => hold.stats.reset(),
    connections: () => wss.clients.size,
    async close() {
      hold.clear();
      rooms.clear();
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await closeHttp(http);
    },
  };
}
