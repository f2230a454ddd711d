import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema, type Plan } from "@volley/contracts";
import { startWsEchoServer, type WsEchoServer } from "@volley/targets";
import { runShard } from "./run-shard";
import type { EngineFrame } from "./types";
import { total } from "./engine-test-kit";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function echo(): Promise<WsEchoServer> {
  const server = await startWsEchoServer({ port: 0 });
  cleanup.push(() => server.close());
  return server;
}

function aggregatePlan(url: string, connections: { count: number; rate: number }): Plan {
  return planSchema.parse({
    name: "aggregate window",
    target: { url, connectTimeout: "2s" },
    connections,
    scenario: { kind: "echo", message: { rate: 20, per: "aggregate", arrival: "constant", timeout: "2s" }, duration: "1s" },
  });
}

async function run(p: Plan) {
  const frames: EngineFrame[] = [];
  const outcome = await runShard(p, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
  return { outcome, frames };
}

/**
 * `per: aggregate` is an open-loop rate over the documented window: `rate` messages per second for
 * `duration` from the first open (rate × duration in all, as k6's constant-arrival-rate and
 * Artillery's arrivalRate for a phase's duration), however long the connections take to ramp.
 */
describe("per: aggregate sends for duration", () => {
  it("sends rate × duration, not rate × (ramp + duration), each one echoed by the server", async () => {
    const server = await echo();
    // Ramp 1 s (10 connections at 10/s), duration 1 s: 20 messages (ramp + duration would be ~40).
    const { outcome, frames } = await run(aggregatePlan(server.url, { count: 10, rate: 10 }));
    expect(outcome.status).toBe("completed");
    expect(outcome.totals).toMatchObject({ expected: 20, sent: 20, received: 20, lost: 0, opened: 10 });
    expect(total(frames, COUNTERS.sent)).toBe(20);
    expect(server.holdStats().count).toBe(20);
  });

  it("with a ramp longer than the window, still opens every connection, and counts only the window as sending time", async () => {
    const server = await echo();
    // Ramp 2 s (10 connections at 5/s), window 1 s from the first open.
    const { outcome, frames } = await run(aggregatePlan(server.url, { count: 10, rate: 5 }));
    expect(outcome.status).toBe("completed");
    expect(outcome.totals).toMatchObject({ expected: 20, sent: 20, received: 20, opened: 10 });
    expect(server.holdStats().count).toBe(20);
    const activeMs = frames.reduce((n, f) => n + (f.activeMs ?? f.durationMs), 0);
    expect(activeMs).toBeGreaterThanOrEqual(1000);
    // The first open comes a connect after the start instant; nothing after the window counts.
    expect(activeMs).toBeLessThan(1100);
    expect(frames.length).toBeGreaterThanOrEqual(2);
  });
});
