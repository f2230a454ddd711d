import { createServer, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { EchoHold, parseDelay } from "./echo-hold";
import type { EchoServer, EchoServerOptions } from "./echo-server";
import { closeHttp, hostPort, listenHttp } from "./listen-http";
import { parseRoom, RoomHub } from "./room-hub";

export type WsEchoServerOptions = EchoServerOptions;
/** url is ws://host:port/echo */
export type WsEchoServer = EchoServer;

export const ECHO_PATH = "/echo";

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/**
 * A WebSocket echo at `/echo`: every frame comes back unchanged (text as text, binary as binary).
 * `?room=<name>` joins a room: each frame also goes at once to every other member (the 2011
 * broadcast benchmark's server), while the sender's own copy keeps the echo's hold.
 */
export async function startWsEchoServer(options: WsEchoServerOptions = {}): Promise<WsEchoServer> {
  const { port = 0, host = "127.0.0.1", delayMs = 0 } = options;
  const hold = new EchoHold();
  const rooms = new RoomHub<WebSocket>();

  const http = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    res.writeHead(path === ECHO_PATH ? 426 : 404, { "content-type": "text/plain" });
    res.end(path === ECHO_PATH ? "use a WebSocket client\n" : "not found\n");
  });
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== ECHO_PATH) return rejectUpgrade(socket, 404, "Not Found");
    const delay = parseDelay(url.searchParams.get("delay"), delayMs);
    const room = parseRoom(url.searchParams.get("room"));
    if (delay === undefined || room === null) return rejectUpgrade(socket, 400, "Bad Request");
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, delay, room));
  });

  function serve(ws: WebSocket, delay: number, room: string | undefined): void {
    // A client that vanishes mid-send must not take the server down with it.
    ws.on("error", () => ws.terminate());
    const replies = hold.queue<{ data: RawData; isBinary: boolean }>(delay, ({ data, isBinary }) => {
      if (ws.readyState === ws.OPEN) ws.send(data, { binary: isBinary });
    });
    if (room !== undefined) rooms.join(room, ws);
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (room !== undefined) {
        rooms.publish(room, ws, (to) => {
          if (to.readyState === to.OPEN) to.send(data, { binary: isBinary });
        });
      }
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
