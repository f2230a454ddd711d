import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startSseNews, type SseNewsStats, type TestApp } from "@volley/targets";
import { SseParser } from "../drivers/sse-stream";
import { runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";

const apps: TestApp<SseNewsStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function news(): Promise<TestApp<SseNewsStats>> {
  // Keepalive comments every 50 ms: the stream reader must skip them, never count them.
  const app = await startSseNews({ keepaliveMs: 50 });
  apps.push(app);
  return app;
}

const headline = (topic: string) => ({
  request: { method: "POST" as const, url: `/news/publish?topic=${topic}`, json: { title: "Breaking #{{ msg.seq }}", clientMsgId: "{{ msg.id }}" } },
  reply: { event: "headline", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
});

describe("flows against an SSE news feed with its own publish endpoint", { timeout: 30_000 }, () => {
  it("echo: each stream its own topic, each publish's headline is its reply", async () => {
    const app = await news();
    const { frames, outcome } = await run({
      name: "news echo",
      target: { url: app.url, protocol: "sse", connectTimeout: "5s" },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", duration: "2s", message: { rate: 5, timeout: "5s" } },
      flow: {
        setup: [{ connect: { query: { topic: "t{{ conn.index }}" } } }],
        messages: [headline("t{{ conn.index }}")],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    // The feed's own counters: every publish reached exactly its publisher's stream.
    expect(stats.streams).toBe(4);
    expect(stats.publishes).toBe(sent);
    expect(stats.eventsDelivered).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, "events.headline")).toBe(sent);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    const latency = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
    expect(latency.totalCount).toBe(sent);
  });

  it("broadcast: one topic, every stream gets every headline; Volley counts what the feed wrote", async () => {
    const app = await news();
    const count = 5;
    const { frames, outcome } = await run({
      name: "news broadcast",
      target: { url: app.url, protocol: "sse", connectTimeout: "5s" },
      connections: { count, rate: 1000 },
      scenario: { kind: "broadcast", room: "world", echo: true, duration: "2s", message: { rate: 2, timeout: "5s" } },
      flow: {
        setup: [{ connect: { query: { topic: "{{ conn.room }}" } } }],
        messages: [headline("{{ conn.room }}")],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    const echoes = total(frames, COUNTERS.received);
    const deliveries = total(frames, COUNTERS.deliveriesReceived);
    expect(sent).toBeGreaterThanOrEqual(count * 3);
    expect(stats.publishes).toBe(sent);
    // Each headline went to its publisher once (the echo) and to every other open stream once.
    expect(echoes).toBe(sent);
    expect(deliveries).toBe(stats.eventsDelivered - sent);
    expect(echoes + deliveries).toBe(stats.eventsDelivered);
    expect(total(frames, "events.headline")).toBe(stats.eventsDelivered);
    // Streams open before the first publish and stay open: every other stream got every headline.
    expect(deliveries).toBeLessThanOrEqual(sent * (count - 1));
    expect(total(frames, COUNTERS.deliveriesExpected)).toBe(deliveries);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
  });

  it("a stream that is not an event stream fails the connect with what the server answered", async () => {
    const app = await news();
    const { outcome } = await run({
      name: "not a stream",
      target: { url: `${app.httpUrl}/news/nowhere`, protocol: "sse", connectTimeout: "5s" },
      connections: { count: 1, rate: 100 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 1 } },
      sanity: false,
      flow: { messages: [headline("x")] },
    });
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toMatch(/HTTP 404/);
  });
});

describe("SseParser", () => {
  it("splits events across chunks and line endings, skips comments, defaults the type to message", () => {
    const got: [string, string][] = [];
    const p = new SseParser((t, d) => got.push([t, d]));
    for (const chunk of [": hi\r", "\nevent: a\r\ndata: 1\r", "\ndata:2\n\n", "data: x\r\r", "id: 7\nevent: b\ndata\n\n", "data: only-half"]) p.feed(chunk);
    expect(got).toEqual([
      ["a", "1\n2"],
      ["message", "x"],
      ["b", ""],
    ]);
  });
});
