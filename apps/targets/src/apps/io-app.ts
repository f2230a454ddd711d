import { createServer } from "node:http";
import { Server as IoServer, type ServerOptions } from "socket.io";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import { sendJson, serveStats, type TestApp, type TestAppOptions } from "./app-http";

/**
 * A test app that speaks Socket.IO 4 (at /socket.io, with `io` options such as a parser) and
 * serves its counters at `GET /stats` on the same port (anything else a 404 naming both),
 * listening; `close` ends every socket. The app's own events are `setup`'s.
 */
export async function startIoApp<S>(
  options: TestAppOptions,
  app: { stats: () => S; io?: Partial<ServerOptions> },
  setup: (io: IoServer) => void,
): Promise<TestApp<S>> {
  const { port = 0, host = "127.0.0.1" } = options;
  const http = createServer((req, res) => {
    if (!serveStats(req, res, app.stats)) sendJson(res, 404, { error: `no route ${req.method} ${req.url}: connect Socket.IO, or GET /stats` });
  });
  const io = new IoServer(http, { serveClient: false, ...app.io });
  setup(io);
  const actualPort = await listenHttp(http, port, host);
  const httpUrl = `http://${hostPort(host, actualPort)}`;
  return {
    port: actualPort,
    url: httpUrl,
    httpUrl,
    stats: app.stats,
    async close() {
      io.disconnectSockets(true);
      await new Promise<void>((resolve) => void io.close(() => resolve()));
      await closeHttp(http).catch(() => undefined);
    },
  };
}
