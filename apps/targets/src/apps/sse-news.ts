import { createServer, type ServerResponse } from "node:http";
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

export const SSE_NEWS_PATHS = { stream: "/news/stream", publish: "/news/publish" } as const;
export const SSE_NEWS_EVENT = "headline";

export interface SseNewsOptions extends TestAppOptions {
  /** How often each stream gets a `: keepalive` comment; 15 s unless a test needs it sooner. */
  keepaliveMs?: number;
}

export interface SseNewsStats {
  /** `GET /news/stream` responses opened. */
  streams: number;
  /** Of those, the ones still open. */
  activeStreams: number;
  /** Accepted `POST /news/publish`es. */
  publishes: number;
  /** `headline` events written, summed over streams (one item to 3 streams counts 3). */
  eventsDelivered: number;
}

export interface Headline {
  id: string;
  title: string;
  ts: number;
  clientMsgId: string | null;
  topic: string | null;
}

interface Stream {
  res: ServerResponse;
  topic: string | undefined;
}

/**
 * An SSE news feed with its own routes, as a news or status site has: `GET /news/stream`
 * (text/event-stream) sends `event: headline` with `id:` and JSON data `{ id, title, ts,
 * clientMsgId, topic }` for every item published after it opened, plus a `: keepalive` comment every
 * 15 s; `POST /news/publish` JSON `{ title, clientMsgId?, topic? }` → 201 `{ id, delivered }`.
 * `?topic=` on the stream keeps only that topic's items (a stream without it gets every item);
 * `?topic=` on publish (or `topic` in the body) files the item under a topic.
 */
export async function startSseNews(options: SseNewsOptions = {}): Promise<TestApp<SseNewsStats>> {
  const { port = 0, host = "127.0.0.1", keepaliveMs = 15_000 } = options;
  const counters: SseNewsStats = { streams: 0, activeStreams: 0, publishes: 0, eventsDelivered: 0 };
  const stats = () => ({ ...counters });
  const streams = new Set<Stream>();
  const ids = idMaker("n");

  const keepalive = setInterval(() => {
    for (const s of streams) s.res.write(": keepalive\n\n");
  }, keepaliveMs);
  keepalive.unref();

  const http = createServer((req, res) => {
    if (serveStats(req, res, stats)) return;
    const url = new URL(req.url ?? "/", "http://x");
    const topic = url.searchParams.get("topic") || undefined;
    if (url.pathname === SSE_NEWS_PATHS.stream && req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" });
      // A first comment so proxies and clients see the stream open before the first headline.
      res.write(": connected\n\n");
      const stream = { res, topic };
      streams.add(stream);
      counters.streams++;
      counters.activeStreams++;
      res.on("close", () => {
        if (streams.delete(stream)) counters.activeStreams--;
      });
      return;
    }
    if (url.pathname === SSE_NEWS_PATHS.publish && req.method === "POST") {
      void readJson(req)
        .then((raw) => {
          const body = asObject(raw, "POST /news/publish");
          const title = requiredString(body, "title");
          const clientMsgId = optionalString(body, "clientMsgId") ?? null;
          const itemTopic = topic ?? optionalString(body, "topic");
          counters.publishes++;
          const item: Headline = { id: ids(), title, ts: Date.now(), clientMsgId, topic: itemTopic ?? null };
          const frame = `id: ${item.id}\nevent: ${SSE_NEWS_EVENT}\ndata: ${JSON.stringify(item)}\n\n`;
          let delivered = 0;
          for (const s of streams) {
            if (s.topic !== undefined && s.topic !== itemTopic) continue;
            s.res.write(frame);
            delivered++;
          }
          counters.eventsDelivered += delivered;
          sendJson(res, 201, { id: item.id, delivered });
        })
        .catch((err: unknown) => sendError(res, err));
      return;
    }
    const known = Object.values(SSE_NEWS_PATHS).includes(url.pathname as never);
    sendError(res, new HttpError(known ? 405 : 404, `use GET ${SSE_NEWS_PATHS.stream}, POST ${SSE_NEWS_PATHS.publish} or GET /stats`));
  });

  const actualPort = await listenHttp(http, port, host);
  const httpUrl = `http://${hostPort(host, actualPort)}`;
  return {
    port: actualPort,
    url: `${httpUrl}${SSE_NEWS_PATHS.stream}`,
    httpUrl,
    stats,
    async close() {
      clearInterval(keepalive);
      for (const s of streams) s.res.destroy();
      await closeHttp(http);
    },
  };
}
