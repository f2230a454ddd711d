import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema, type PlanInput } from "@volley/contracts";
import { startWsEchoServer } from "@volley/targets";
import { wsDriver } from "../drivers/ws-driver";
import { total } from "./engine-test-kit";
import { RateFeed } from "./rate-feed";
import { runShard } from "./run-shard";
import { WatchedDriver } from "./scenario-test-kit";
import type { EngineFrame } from "./types";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

async function echoServer() {
  const server = await startWsEchoServer();
  cleanup.push(() => server.close());
  return server;
}

/** Runs `plan` and pushes `scale` to its rate feed `afterMs` past the start instant (as the hub does, ahead of time). */
async function runWithChange(plan: PlanInput, driver: WatchedDriver | undefined, scale: number, afterMs: number, what: "rate" | "connections" = "rate") {
  const frames: EngineFrame[] = [];
  const rate = new RateFeed();
  const startAt = Date.now() + 50;
  rate.push({ scale, at: startAt + afterMs, what });
  const outcome = await runShard(planSchema.parse(plan), { startAt, onFrame: (f) => frames.push(f), rate, ...(driver ? { driver } : {}) });
  return { outcome, frames, startUs: startAt * 1000 };
}

describe("live rate changes", () => {
  it("per connection: each connection moves to the new rate at the change's instant, and expected follows sent exactly", async () => {
    const server = await echoServer();
    const driver = new WatchedDriver(wsDriver);
    const { outcome, frames } = await runWithChange(
      {
        name: "rate up",
        target: { url: server.url, connectTimeout: "5s" },
        connections: { count: 4, rate: 1000 },
        scenario: { kind: "echo", message: { rate: 20, timeout: "5s" }, duration: "3s" },
      },
      driver,
      3,
      1000,
    );
    expect(outcome.status).toBe("completed");
    // Every slot the schedules called for went out and came back: the expected count moved with the rate.
    expect(outcome.totals.sent).toBe(outcome.totals.expected);
    expect(total(frames, COUNTERS.received)).toBe(outcome.totals.sent);
    expect(outcome.totals.shed).toBe(0);
    // ~1 s at 20/s, then ~2 s at 60/s per connection (the driver's own count, not the engine's).
    for (const c of driver.connections) {
      expect(c.sent).toBeGreaterThanOrEqual(135);
      expect(c.sent).toBeLessThanOrEqual(142);
      const gaps = c.intended.slice(1).map((t, i) => t - c.intended[i]!);
      // Before the change 50 ms apart, after it 16.7 ms: the grid changes once and stays on its phase.
      expect(gaps.slice(0, 15).every((g) => Math.abs(g - 50_000) < 1)).toBe(true);
      expect(gaps.slice(-60).every((g) => Math.abs(g - 50_000 / 3) < 1)).toBe(true);
    }
    expect(driver.connections.reduce((n, c) => n + c.sent, 0)).toBe(outcome.totals.sent);
  });

  it("aggregate: the shard's one schedule halves from the change on", async () => {
    const server = await echoServer();
    const driver = new WatchedDriver(wsDriver);
    const { outcome } = await runWithChange(
      {
        name: "rate down",
        target: { url: server.url, connectTimeout: "5s" },
        connections: { count: 4, rate: 1000 },
        scenario: { kind: "echo", message: { rate: 80, per: "aggregate", timeout: "5s" }, duration: "3s" },
      },
      driver,
      0.5,
      1000,
    );
    expect(outcome.status).toBe("completed");
    expect(outcome.totals.sent).toBe(outcome.totals.expected);
    // ~80 in the first second, then 40/s for 2 s.
    expect(outcome.totals.sent).toBeGreaterThanOrEqual(155);
    expect(outcome.totals.sent).toBeLessThanOrEqual(165);
    expect(driver.connections.reduce((n, c) => n + c.sent, 0)).toBe(outcome.totals.sent);
  });

  it("users: arrivals follow the plan's rate times the scale from the change on", async () => {
    const server = await echoServer();
    const { outcome, frames } = await runWithChange(
      {
        name: "users up",
        target: { url: server.url, connectTimeout: "5s" },
        connections: { count: 200 },
        scenario: { kind: "users", arrivalRate: 10, duration: "3s" },
        flow: { steps: [{ connect: {} }, { send: { json: { id: "{{ msg.id }}" }, reply: { match: { path: "$.id", equals: "{{ msg.id }}" } } } }] },
      },
      undefined,
      2,
      1000,
    );
    expect(outcome.status).toBe("completed");
    // 10 in the first second, then 20/s for 2 s: 50 users (± the one on the change's instant, which
    // the clocks place a few µs either side of the 1 s mark); without the change 30.
    const started = total(frames, COUNTERS.usersStarted);
    expect(started).toBeGreaterThanOrEqual(49);
    expect(started).toBeLessThanOrEqual(51);
    expect(total(frames, COUNTERS.usersCompleted)).toBe(started);
  });

  it("a plan whose rate cannot change (stages) ignores a change and keeps the plan's rate", async () => {
    const server = await echoServer();
    const driver = new WatchedDriver(wsDriver);
    const { outcome } = await runWithChange(
      {
        name: "stages",
        target: { url: server.url, connectTimeout: "5s" },
        connections: { count: 2, stages: [{ duration: "2s", target: 2 }] },
        scenario: { kind: "echo", message: { rate: 10, timeout: "5s" }, duration: "2s" },
      },
      driver,
      4,
      500,
    );
    expect(outcome.status).toBe("completed");
    expect(outcome.totals.sent).toBe(outcome.totals.expected);
    expect(outcome.totals.sent).toBeLessThanOrEqual(40);
  });

  it("connections up: the added connections open at connections.rate from the change and send to the plan's end of sending", async () => {
    const server = await echoServer();
    const driver = new WatchedDriver(wsDriver);
    const { outcome } = await runWithChange(
      {
        name: "more connections",
        target: { url: server.url, connectTimeout: "5s" },
        connections: { count: 4, rate: 1000 },
        scenario: { kind: "echo", message: { rate: 10, timeout: "5s" }, duration: "4s" },
      },
      driver,
      2,
      1000,
      "connections",
    );
    expect(outcome.status).toBe("completed");
    expect(outcome.totals.opened).toBe(8);
    expect(outcome.totals.sent).toBe(outcome.totals.expected);
    expect(outcome.totals.received).toBe(outcome.totals.sent);
    const byId = [...driver.connections].sort((a, b) => a.ownId - b.ownId).map((c) => c.sent);
    // The plan's four for the whole 4 s, the added four from 1 s to the end: 3 s at 10/s.
    for (const n of byId.slice(0, 4)) expect(n).toBe(40);
    for (const n of byId.slice(4)) {
      expect(n).toBeGreaterThanOrEqual(29);
      expect(n).toBeLessThanOrEqual(31);
    }
  });

  it("connections down: the newest retire at the change, stop sending, and close once their replies are in", async () => {
    const server = await echoServer();
    const driver = new WatchedDriver(wsDriver);
    const { outcome } = await runWithChange(
      {
        name: "fewer connections",
        target: { url: server.url, connectTimeout: "5s" },
        connections: { count: 8, rate: 1000 },
        scenario: { kind: "echo", message: { rate: 10, timeout: "5s" }, duration: "3s" },
      },
      driver,
      0.25,
      1000,
      "connections",
    );
    expect(outcome.status).toBe("completed");
    expect(outcome.totals.opened).toBe(8);
    // What the retired would have sent left the expected count: nothing counted lost or unsent.
    expect(outcome.totals.sent).toBe(outcome.totals.expected);
    expect(outcome.totals.received).toBe(outcome.totals.sent);
    expect(outcome.totals.lost).toBe(0);
    const byId = [...driver.connections].sort((a, b) => a.ownId - b.ownId);
    for (const c of byId.slice(0, 2)) expect(c.sent).toBe(30);
    for (const c of byId.slice(2)) {
      expect(c.sent).toBeGreaterThanOrEqual(9);
      expect(c.sent).toBeLessThanOrEqual(11);
      expect(c.closed).toBe(true);
    }
  });
});
