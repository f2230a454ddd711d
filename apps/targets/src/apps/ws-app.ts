import { createServer } from "node:http";
import { WebSocketServer, type ServerOptions, type WebSocket } from "ws";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import { sendJson, serveStats, type TestApp, type TestAppOptions } from "./app-http";

/**
 * A test app that speaks WebSocket at `path` and serves its counters at `GET /stats` on the same
 * port (anything else a 404 naming both), listening; `close` ends every socket. The app's own
 * protocol is `onConnection`'s.
 */
export async function startWsApp<S>(
  options: TestAppOptions,
  app: { path: string; stats: () => S; verifyClient?: ServerOptions["verifyClient"] },
  onConnection: (ws: WebSocket) => void,
): Promise<TestApp<S>> {
  const { port = 0, host = "127.0.0.1" } = options;
  const http = createServer((req, res) => {
    if (!serveStats(req, res, app.stats)) sendJson(res, 404, { error: `no route ${req.method} ${req.url}: connect a WebSocket to ${app.path}, or GET /stats` });
  });
  const wss = new WebSocketServer({ server: http, path: app.path, perMessageDeflate: false, ...(app.verifyClient ? { verifyClient: app.verifyClient } : {}) });
  wss.on("connection", (ws) => {
    ws.on("error", () => undefined);
    onConnection(ws);
  });
  const actualPort = await listenHttp(http, port, host);
  return {
    port: actualPort,
    url: `ws://${hostPort(host, actualPort)}${app.path}`,
    httpUrl: `http://${hostPort(host, actualPort)}`,
    stats: app.stats,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await closeHttp(http);
    },
  };
}
