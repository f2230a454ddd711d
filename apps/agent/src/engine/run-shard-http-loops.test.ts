import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { mergeEncoded, summarizeRun } from "@volley/metrics";
import { startHelloHttp, type HelloHttpStats, type TestApp } from "@volley/targets";
import { runShard } from "./run-shard";
import { total } from "./engine-test-kit";
import type { EngineFrame } from "./types";

/**
 * The HTTP load modes against a real node:http server, each checked against the server's own
 * counters: requests it answered, the most it had in flight at once, TCP connections it accepted.
 */
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

async function server(): Promise<TestApp<HelloHttpStats>> {
  const app = await startHelloHttp();
  cleanup.push(() => app.close());
  return app;
}

async function run(plan: PlanInput) {
  const frames: EngineFrame[] = [];
  const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
  const histogram = (name: string) => mergeEncoded(frames.flatMap((f) => f.histograms[name] ?? [])).totalCount;
  return { outcome, frames, histogram };
}

const target = (url: string, http: Record<string, unknown> = {}) => ({
  url,
  protocol: "http" as const,
  connectTimeout: "5s",
  http: { method: "GET" as const, ...http },
});

describe("http-rps load modes against a real server", () => {
  it("requests: sends exactly N in total (the server's count), then ends without waiting out duration", async () => {
    const app = await server();
    const started = Date.now();
    const { outcome, frames, histogram } = await run({
      name: "exact count",
      target: target(`${app.url}/hello`),
      connections: { count: 7, rate: 1000 },
      scenario: { kind: "http-rps", message: { rate: 400, arrival: "poisson", timeout: "5s" }, duration: "20s", requests: 333 },
    });
    expect(outcome.status).toBe("completed");
    expect(app.stats().requests).toBe(333);
    expect(total(frames, COUNTERS.sent)).toBe(333);
    expect(total(frames, COUNTERS.received)).toBe(333);
    expect(outcome.totals).toMatchObject({ expected: 333, sent: 333, received: 333, lost: 0 });
    expect(histogram(HISTOGRAMS.messageLatency)).toBe(333);
    // 333 at 400/s is under a second of sending; the 20 s duration only caps it.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("loop closed: at most `connections.count` requests in flight at the server, timed as response time apart from latency", async () => {
    const app = await server();
    const closedPlan: PlanInput = {
      name: "closed loop",
      // Each answer is held 20 ms, so an open loop at this rate would have ~40 in flight.
      target: target(`${app.url}/hello?delay=20`),
      connections: { count: 4, rate: 1000 },
      scenario: { kind: "http-rps", message: { rate: 2000, timeout: "5s" }, duration: "1s", loop: "closed" },
    };
    const { outcome, frames, histogram } = await run(closedPlan);
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    expect(stats.maxInFlight).toBeLessThanOrEqual(4);
    expect(stats.maxInFlight).toBe(4);
    const sent = total(frames, COUNTERS.sent);
    expect(stats.requests).toBe(sent);
    // 4 users × ~50 answers/s each for 1 s: far fewer than the rate cap's 2,000.
    expect(sent).toBeGreaterThan(40);
    expect(sent).toBeLessThan(4 * 60);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(histogram(HISTOGRAMS.closedLoopResponseTime)).toBe(sent);
    expect(histogram(HISTOGRAMS.messageLatency)).toBe(0);
    expect(outcome.totals).toMatchObject({ expected: sent, sent, received: sent, lost: 0 });
    // The summary shows them as closed-loop response times, saying what that hides; open-loop latency stays empty.
    const thresholds = planSchema.parse({ ...closedPlan, thresholds: ["response_time.p50 >= 20ms", "latency.p99 < 1s"] }).thresholds;
    const summary = summarizeRun(frames, thresholds);
    expect(summary.latency.count).toBe(0);
    // A threshold on its response time is judged on it; one on latency finds nothing measured.
    expect(summary.thresholds.map((t) => [t.expression, t.ok, t.actual === null])).toEqual([
      ["response_time.p50 >= 20ms", true, false],
      ["latency.p99 < 1s", false, true],
    ]);
    expect(summary.closedLoop?.responseTime.count).toBe(sent);
    expect(summary.closedLoop?.responseTime.p50).toBeGreaterThanOrEqual(20);
    expect(summary.closedLoop?.note).toMatch(/not latency from an intended send time.*coordinated omission/);
  });

  it("loop closed with requests and think time: exactly N, each user pausing between its requests", async () => {
    const app = await server();
    const started = Date.now();
    const { outcome, frames } = await run({
      name: "closed loop exact",
      target: target(`${app.url}/hello`),
      connections: { count: 5, rate: 1000 },
      scenario: { kind: "http-rps", message: { rate: 100_000, timeout: "5s" }, duration: "30s", loop: "closed", thinkTime: "50ms", requests: 60 },
    });
    expect(outcome.status).toBe("completed");
    expect(app.stats().requests).toBe(60);
    expect(total(frames, COUNTERS.sent)).toBe(60);
    expect(app.stats().maxInFlight).toBeLessThanOrEqual(5);
    // 12 requests per user with 11 pauses of 50 ms: at least 550 ms, and nowhere near the 30 s cap.
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(10_000);
  });

  it("keepAlive (default): every connection reuses its socket; keepAlive: false opens one TCP connection per request", async () => {
    const kept = await server();
    const plan = (url: string, http: Record<string, unknown>): PlanInput => ({
      name: "connections",
      target: target(`${url}/hello`, http),
      connections: { count: 5, rate: 1000 },
      scenario: { kind: "http-rps", message: { rate: 500, arrival: "constant", timeout: "5s" }, duration: "2s", requests: 200 },
    });
    const a = await run(plan(kept.url, {}));
    expect(a.outcome.totals).toMatchObject({ sent: 200, received: 200 });
    expect(kept.stats().requests).toBe(200);
    expect(kept.stats().connections).toBe(5);
    // Kept alive, no request opened a socket of its own: only the five connects are timed.
    expect(a.histogram(HISTOGRAMS.wsConnect)).toBe(5);
    expect(a.histogram(HISTOGRAMS.httpConnect)).toBe(0);

    const fresh = await server();
    const b = await run(plan(fresh.url, { keepAlive: false }));
    expect(b.outcome.totals).toMatchObject({ sent: 200, received: 200, lost: 0 });
    expect(fresh.stats().requests).toBe(200);
    expect(fresh.stats().connections).toBe(200);
    // Every request's own connect is timed, as ab's Connect row: one per TCP connection the server accepted.
    expect(b.histogram(HISTOGRAMS.httpConnect)).toBe(fresh.stats().connections);
    expect(summarizeRun(b.frames, []).timings?.httpConnect?.count).toBe(200);
  });

  it("keepAlive: false against a server that goes away: each request's refusal is counted by class, the users stay", async () => {
    const app = await server();
    const url = app.url;
    const frames: EngineFrame[] = [];
    const running = runShard(
      planSchema.parse({
        name: "refused per request",
        target: target(`${url}/hello`, { keepAlive: false }),
        connections: { count: 2, rate: 1000 },
        scenario: { kind: "http-rps", message: { rate: 100, arrival: "constant", timeout: "1s" }, duration: "1s" },
      }),
      { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) },
    );
    await new Promise((r) => setTimeout(r, 400));
    await app.close();
    const outcome = await running;
    expect(outcome.status).toBe("completed");
    expect(total(frames, "errors.refused")).toBeGreaterThan(0);
    // The load connections are virtual users: none of them was dropped by a refused request.
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
  });
});
