import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { mergeEncoded, summarizeRun } from "@volley/metrics";
import { HTTP_PATHS, startHttpTargetServer, startWsEchoServer } from "@volley/targets";
import { httpDriver } from "../drivers/http-driver";
import { wsDriver } from "../drivers/ws-driver";
import { runShard } from "./run-shard";
import { WatchedDriver } from "./scenario-test-kit";
import type { EngineFrame } from "./types";
import { total } from "./engine-test-kit";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

const histogramCount = (frames: EngineFrame[], name: string) => mergeEncoded(frames.flatMap((f) => f.histograms[name] ?? [])).totalCount;

async function run(plan: PlanInput, driver: WatchedDriver, random?: () => number) {
  const frames: EngineFrame[] = [];
  const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f), driver, random });
  return { outcome, frames, summary: summarizeRun(frames, []) };
}

/** A small deterministic generator (mulberry32), so the Poisson schedule is the same every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("load scenarios", () => {
  it("storm over ws: the crowd ramps and pings, the canary pings on its own schedule and histogram", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const driver = new WatchedDriver(wsDriver);
    const { outcome, frames, summary } = await run(
      {
        name: "storm",
        target: { url: server.url, connectTimeout: "5s" },
        connections: { count: 10, rate: 50 },
        scenario: { kind: "storm", message: { rate: 2, timeout: "5s" }, duration: "1s", canary: { rate: 10 } },
      },
      driver,
    );
    expect(outcome.status).toBe("completed");
    // The crowd and the canary: one connection more than the plan's count.
    expect(outcome.totals.opened).toBe(11);
    const canary = driver.connections.find((c) => c.ownId === 10)!;
    expect(canary).toBeDefined();
    // The canary opens first and pings from then to the end of the run (ramp 200 ms + 1 s) at 10/s.
    expect(canary.sent).toBeGreaterThanOrEqual(11);
    expect(outcome.totals.canary).toEqual({ sent: canary.sent, received: canary.sent, lost: 0 });
    expect(total(frames, COUNTERS.canarySent)).toBe(canary.sent);
    expect(histogramCount(frames, HISTOGRAMS.canaryLatency)).toBe(canary.sent);

    // The crowd's pings are the messages: 2 per connection-second, the canary's apart.
    const crowd = driver.connections.filter((c) => c !== canary).reduce((n, c) => n + c.sent, 0);
    expect(outcome.totals.sent).toBe(crowd);
    expect(Math.abs(crowd - outcome.totals.expected)).toBeLessThanOrEqual(1);
    expect(outcome.totals.received).toBe(crowd);
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(crowd);
    // Connections are attempted at connections.rate (every 20 ms): the last crowd member opens ~180 ms
    // after the first, less the first connect's extra cost (all at once would be a few ms apart).
    const firsts = driver.connections.filter((c) => c !== canary).map((c) => c.intended[0]!);
    expect((Math.max(...firsts) - Math.min(...firsts)) / 1000).toBeGreaterThanOrEqual(90);

    expect(summary.timings!.canary.count).toBe(canary.sent);
    expect(summary.canary).toMatchObject({ sent: canary.sent, received: canary.sent, lost: 0 });
    expect(summary.canary!.latency.count).toBe(canary.sent);
    expect(summary.messages.sent).toBe(crowd);
  });

  it("http-rps over http: aggregate Poisson requests spread over the keep-alive connections", async () => {
    const server = await startHttpTargetServer();
    cleanup.push(() => server.close());
    const driver = new WatchedDriver(httpDriver);
    const plan: PlanInput = {
      name: "http-rps",
      target: { url: `${server.url}${HTTP_PATHS.echo}`, protocol: "http", connectTimeout: "5s" },
      connections: { count: 4, rate: 1000 },
      scenario: { kind: "http-rps", message: { rate: 100, timeout: "5s" }, duration: "1500ms" },
    };
    const parsed = planSchema.parse(plan).scenario.message;
    expect([parsed.per, parsed.arrival]).toEqual(["aggregate", "poisson"]);
    const { outcome, frames, summary } = await run(plan, driver, seeded(7));
    expect(outcome.status).toBe("completed");
    const sent = outcome.totals.sent;
    // 150 expected; Poisson, so loosely.
    expect(sent).toBeGreaterThan(90);
    expect(sent).toBeLessThan(220);
    expect(outcome.totals.received).toBe(sent);
    expect(outcome.totals.lost).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(sent);
    // Round robin over the 4 connections.
    for (const c of driver.connections) expect(c.sent).toBeGreaterThanOrEqual(Math.floor(sent / 4) - 1);
    // Exponential gaps: their spread is about their mean (constant arrival would have none).
    const times = driver.connections.flatMap((c) => c.intended).sort((a, b) => a - b);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
    expect(sd / mean).toBeGreaterThan(0.6);
    expect(summary.messages.sent).toBe(sent);
    expect(summary.deliveries).toBeUndefined();
  });

  it("http without a method: GET when the plan gives no body (a server answering 405 to POST sees none), POST with one", async () => {
    // Like the nginx that answered 405 to all of a plan's requests: only GET is served, and every request is counted by method.
    const methods = new Map<string, number>();
    const server = createServer((req, res) => {
      methods.set(req.method ?? "", (methods.get(req.method ?? "") ?? 0) + 1);
      req.resume();
      req.on("end", () => res.writeHead(req.method === "GET" ? 200 : 405, { "content-length": 2 }).end("ok"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanup.push(() => new Promise((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const plan = (http: { body?: string }): PlanInput => ({
      name: "http method",
      target: { url, protocol: "http", connectTimeout: "5s", http },
      connections: { count: 2, rate: 1000 },
      scenario: { kind: "echo", message: { rate: 10, timeout: "5s" }, duration: "1s" },
    });

    // The protocol's own driver (not a watched one), so its per-request errors reach the counters.
    const runPlain = async (p: PlanInput) => {
      const frames: EngineFrame[] = [];
      const outcome = await runShard(planSchema.parse(p), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
      return { outcome, frames };
    };
    const get = await runPlain(plan({}));
    expect(get.outcome.status).toBe("completed");
    expect(get.outcome.totals.sent).toBeGreaterThanOrEqual(15);
    expect(Object.fromEntries(methods)).toEqual({ GET: get.outcome.totals.sent });
    expect(total(get.frames, "errors.protocol")).toBe(0);
    expect(get.outcome.totals.received).toBe(get.outcome.totals.sent);

    methods.clear();
    const post = await runPlain(plan({ body: '{"hello":1}' }));
    expect(Object.fromEntries(methods)).toEqual({ POST: post.outcome.totals.sent });
    expect(total(post.frames, "errors.protocol")).toBe(post.outcome.totals.sent);
  });
});
