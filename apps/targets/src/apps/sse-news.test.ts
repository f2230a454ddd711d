import { afterEach, describe, expect, it } from "vitest";
import type { TestApp } from "./app-http";
import { startSseNews, type Headline, type SseNewsOptions, type SseNewsStats } from "./sse-news";

const apps: TestApp<SseNewsStats>[] = [];
const aborts: AbortController[] = [];
afterEach(async () => {
  for (const a of aborts.splice(0)) a.abort();
  for (const a of apps.splice(0)) await a.close();
});

async function start(options: SseNewsOptions = {}) {
  const app = await startSseNews(options);
  apps.push(app);
  return app;
}

interface SseFrame {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
}

/** Opens the stream and parses it as an EventSource does (fields per line, frames by blank line). */
async function stream(url: string) {
  const abort = new AbortController();
  aborts.push(abort);
  const res = await fetch(url, { signal: abort.signal, headers: { accept: "text/event-stream" } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const frames: SseFrame[] = [];
  const waiters: { check: () => boolean; resolve: () => void }[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame: SseFrame = {};
          for (const line of buffer.slice(0, end).split("\n")) {
            if (line.startsWith(":")) frame.comment = line.slice(1).trim();
            else {
              const [field, ...rest] = line.split(":");
              (frame as Record<string, string>)[field!] = rest.join(":").replace(/^ /, "");
            }
          }
          buffer = buffer.slice(end + 2);
          frames.push(frame);
          for (const w of waiters.filter((w) => w.check())) w.resolve();
        }
      }
    } catch {
      // aborted at teardown
    }
  })();
  const headlines = () => frames.filter((f) => f.event === "headline").map((f) => JSON.parse(f.data!) as Headline);
  const until = (check: () => boolean) => new Promise<void>((resolve) => (check() ? resolve() : waiters.push({ check, resolve })));
  await until(() => frames.length > 0); // the ": connected" comment: the server has registered the stream
  return { frames, headlines, until };
}

async function publish(app: TestApp<unknown>, body: unknown, query = "") {
  const res = await fetch(`${app.httpUrl}/news/publish${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { id?: string; delivered?: number; error?: string } };
}

describe("sse news", () => {
  it("sends every published headline to every stream, filtered by topic, and counts deliveries", async () => {
    const app = await start();
    expect(app.url).toBe(`${app.httpUrl}/news/stream`);
    const all = await stream(app.url);
    const sport = await stream(`${app.url}?topic=sport`);
    const before = Date.now();
    const first = await publish(app, { title: "Markets up", clientMsgId: "c1" });
    expect(first).toEqual({ status: 201, body: { id: expect.stringMatching(/^n_/), delivered: 1 } });
    const second = await publish(app, { title: "Cup final" }, "?topic=sport");
    expect(second.body.delivered).toBe(2);
    const third = await publish(app, { title: "Derby", topic: "sport", clientMsgId: "c3" });
    expect(third.body.delivered).toBe(2);

    await all.until(() => all.headlines().length === 3);
    await sport.until(() => sport.headlines().length === 2);
    const h = all.headlines();
    expect(h[0]).toEqual({ id: first.body.id, title: "Markets up", ts: expect.any(Number), clientMsgId: "c1", topic: null });
    expect(h[0]!.ts).toBeGreaterThanOrEqual(before - 1);
    expect(h[1]).toMatchObject({ id: second.body.id, clientMsgId: null, topic: "sport" });
    expect(sport.headlines().map((x) => x.title)).toEqual(["Cup final", "Derby"]);
    // The SSE id field carries the item's id, so Last-Event-ID tooling sees it.
    expect(all.frames.filter((f) => f.event === "headline").map((f) => f.id)).toEqual(h.map((x) => x.id));

    const served = await (await fetch(`${app.httpUrl}/stats`)).json();
    expect(served).toEqual({ streams: 2, activeStreams: 2, publishes: 3, eventsDelivered: 5 });
  });

  it("writes keepalive comments and forgets closed streams", async () => {
    const app = await start({ keepaliveMs: 30 });
    const s = await stream(app.url);
    await s.until(() => s.frames.some((f) => f.comment === "keepalive"));
    aborts.pop()!.abort();
    for (let i = 0; i < 200 && app.stats().activeStreams > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(app.stats().activeStreams).toBe(0);
    expect((await publish(app, { title: "nobody" })).body.delivered).toBe(0);
    expect(app.stats()).toEqual({ streams: 1, activeStreams: 0, publishes: 1, eventsDelivered: 0 });
  });

  it("keeps exact counts over a bounded burst", async () => {
    const app = await start();
    const streams = await Promise.all([stream(app.url), stream(app.url), stream(app.url)]);
    for (let i = 0; i < 30; i++) expect((await publish(app, { title: `t${i}`, clientMsgId: `k${i}` })).status).toBe(201);
    await Promise.all(streams.map((s) => s.until(() => s.headlines().length === 30)));
    for (const s of streams) expect(s.headlines().map((x) => x.clientMsgId)).toEqual(Array.from({ length: 30 }, (_, i) => `k${i}`));
    expect(app.stats()).toMatchObject({ publishes: 30, eventsDelivered: 90 });
  });

  it("answers publish mistakes with a status naming the fix", async () => {
    const app = await start();
    expect(await publish(app, { text: "x" })).toEqual({ status: 400, body: { error: "title is required (a non-empty string)" } });
    expect((await fetch(`${app.httpUrl}/news/publish`)).status).toBe(405);
    expect((await fetch(`${app.httpUrl}/nope`)).status).toBe(404);
    expect(app.stats().publishes).toBe(0);
  });
});
