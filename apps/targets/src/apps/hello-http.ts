import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import { serveStats, STATS_PATH, type TestApp, type TestAppOptions } from "./app-http";

/**
 * What the server itself saw, the ground truth for request counts, concurrency and connection reuse
 * (GET /stats is not counted in any of them).
 */
export interface HelloHttpStats {
  /** Requests answered or still being answered. */
  requests: number;
  /** TCP connections accepted: with keep-alive far fewer than requests, with one per request as many. */
  connections: number;
  /** Requests being handled right now (between arrival and the end of the response). */
  inFlight: number;
  /** The most requests ever in flight at once. */
  maxInFlight: number;
}

export const HELLO_HTTP_BODY = "hello\n";

/**
 * The simplest HTTP app a load tool is compared on (what `ab`, `wrk` and `autocannon` are usually
 * pointed at): any method on any path answers 200 `hello` after reading the request body, with
 * `?delay=<ms>` holding the answer that long (for concurrency counts). Honours `Connection: close`
 * as node:http does, so one-request-per-connection clients are served as they ask.
 */
export async function startHelloHttp(options: TestAppOptions = {}): Promise<TestApp<HelloHttpStats>> {
  const { port = 0, host = "127.0.0.1" } = options;
  const counters: HelloHttpStats = { requests: 0, connections: 0, inFlight: 0, maxInFlight: 0 };
  const stats = () => ({ ...counters });
  const sockets = new Set<Socket>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === STATS_PATH && serveStats(req, res, stats)) return;
    counters.requests++;
    counters.inFlight++;
    if (counters.inFlight > counters.maxInFlight) counters.maxInFlight = counters.inFlight;
    const q = req.url?.indexOf("?delay=") ?? -1;
    const delay = q >= 0 ? Number(req.url!.slice(q + 7)) : 0;
    const answer = () => {
      counters.inFlight--;
      res.writeHead(200, { "content-type": "text/plain", "content-length": HELLO_HTTP_BODY.length }).end(HELLO_HTTP_BODY);
    };
    // Drain the body (a POST's) before answering, as any real handler reads its request.
    req.on("data", () => {});
    req.on("end", () => (delay > 0 ? setTimeout(answer, delay) : answer()));
  });
  server.keepAliveTimeout = 30_000;
  server.on("connection", (s: Socket) => {
    counters.connections++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const bound = await listenHttp(server, port, host);
  const url = `http://${hostPort(host, bound)}`;
  return {
    port: bound,
    url,
    httpUrl: url,
    stats,
    async close() {
      for (const s of sockets) s.destroy();
      await closeHttp(server);
    },
  };
}
