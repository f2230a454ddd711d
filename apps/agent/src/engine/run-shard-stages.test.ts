import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema, type PlanInput } from "@volley/contracts";
import { summarizeRun } from "@volley/metrics";
import { startWsEchoServer } from "@volley/targets";
import { wsDriver } from "../drivers/ws-driver";
import { runShard } from "./run-shard";
import { WatchedDriver } from "./scenario-test-kit";
import { StagePlan } from "./stage-plan";
import type { EngineFrame } from "./types";
import { total } from "./engine-test-kit";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

const S = 1_000_000;

describe("stage plan", () => {
  it("moves linearly to each target and reaches it exactly at the stage's end", () => {
    const p = new StagePlan([
      { duration: "2s", target: 6 },
      { duration: "2s", target: 6 },
      { duration: "1s", target: 0 },
    ]);
    expect(p.totalUs).toBe(5 * S);
    expect([0, 0.33, 0.34, 1, 1.99, 2, 3, 4].map((s) => p.targetAt(s * S))).toEqual([0, 0, 1, 3, 5, 6, 6, 6]);
    // Falling: the count drops as soon as the line leaves it, and is 0 at the end.
    expect([4.01, 4.17, 4.5, 4.99, 5, 6].map((s) => p.targetAt(s * S))).toEqual([6, 5, 3, 1, 0, 0]);
    expect(p.nextChange(0)).toBeCloseTo(S / 3, 0);
    expect(p.nextChange(2.5 * S)).toBe(4 * S);
    expect(p.nextChange(4 * S)).toBeCloseTo(4 * S + S / 6, 0);
    expect(p.nextChange(5 * S)).toBe(Infinity);
    expect([0, 1.9, 2, 4.5, 5].map((s) => p.stageAt(s * S))).toEqual([0, 0, 1, 2, 2]);
  });
});

describe("connections.stages", () => {
  it("ramps 0→6 over 2 s, holds 2 s, closes newest first to 0 over 1 s: exact counts, no loss", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const driver = new WatchedDriver(wsDriver);
    const plan = planSchema.parse({
      name: "stages",
      // Replies held 60 ms: a connection retired within 60 ms of its last send still awaits it.
      target: { url: `${server.url}?delay=60`, connectTimeout: "2s" },
      connections: {
        count: 6,
        stages: [
          { duration: "2s", target: 6 },
          { duration: "2s", target: 6 },
          { duration: "1s", target: 0 },
        ],
      },
      scenario: { kind: "echo", message: { rate: 10, timeout: "5s" }, duration: "30s" },
    } satisfies PlanInput);
    const frames: EngineFrame[] = [];
    const startAt = Date.now() + 50;
    // The engine's start instant on the monotonic clock it uses (performance.now in µs).
    const t0 = performance.now() * 1000 + (startAt - Date.now()) * 1000;
    const outcome = await runShard(plan, { startAt, onFrame: (f) => frames.push(f), driver });

    expect(outcome.status).toBe("completed");
    const t = outcome.totals;
    expect(t.opened).toBe(6);
    expect(t.failed).toBe(0);
    // Every connection closed by us (the falling stage), none by the server, nothing lost.
    expect(t.closed).toBe(6);
    expect(total(frames, COUNTERS.connectionsClosed)).toBe(6);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
    expect(t.lost).toBe(0);
    expect(t.received).toBe(t.sent);
    expect(total(frames, COUNTERS.sent)).toBe(t.sent);
    // Expected follows the stages: what each connection was due to send while it was open.
    expect(Math.abs(t.sent - t.expected)).toBeLessThanOrEqual(1);
    // 20.5 connection-seconds of the stage line at 10/s (205), each connection's window rounded up to
    // a whole slot (+1 at most), less what its connect took.
    expect(t.sent).toBeGreaterThanOrEqual(190);
    expect(t.sent).toBeLessThanOrEqual(211);

    // Per connection: it opens on its rising crossing (k+1)/3 s, is retired newest first at
    // 4 + (6-k)/6 s, and sends every 100 ms in between, from its open.
    expect(driver.connections).toHaveLength(6);
    for (const c of driver.connections) {
      const k = c.ownId;
      expect(k).toBeGreaterThanOrEqual(0);
      expect(k).toBeLessThan(6);
      const firstS = (c.intended[0]! - t0) / S;
      const lastS = (c.intended.at(-1)! - t0) / S;
      const retireS = 4 + (6 - k) / 6;
      expect(firstS, `connection ${k} opens`).toBeGreaterThanOrEqual((k + 1) / 3 - 0.01);
      expect(firstS, `connection ${k} opens`).toBeLessThan((k + 1) / 3 + 0.3);
      expect(lastS, `connection ${k} stops`).toBeLessThan(retireS + 0.01);
      expect(lastS, `connection ${k} stops`).toBeGreaterThan(retireS - 0.15);
      for (let i = 1; i < c.intended.length; i++) expect(c.intended[i]! - c.intended[i - 1]!).toBeCloseTo(100_000, 0);
    }

    // Frames: stage by start instant, and connections.active at each interval's end (loosely: connects take ms).
    const byIndex = (i: number) => frames.find((f) => f.index === i)!;
    expect([0, 1, 2, 3, 4].map((i) => byIndex(i).stage)).toEqual([0, 0, 1, 1, 2]);
    const active = (i: number) => byIndex(i).counters[COUNTERS.connectionsActive];
    expect(active(0)).toBeGreaterThanOrEqual(2);
    expect(active(0)).toBeLessThanOrEqual(3);
    expect(active(1)).toBeGreaterThanOrEqual(5);
    expect([active(2), active(3)]).toEqual([6, 6]);
    expect(frames.at(-1)!.counters[COUNTERS.connectionsActive]).toBe(0);
    // The run lasts the stages' total (5 s), plus the wait for the last replies.
    expect(frames.length).toBeGreaterThanOrEqual(5);
    expect(frames.length).toBeLessThanOrEqual(7);

    const summary = summarizeRun(frames, [], plan);
    expect(summary.messages.lost).toBe(0);
    expect(summary.latency.count).toBe(t.sent);
    expect(summary.latency.min).toBeGreaterThanOrEqual(60 - 0.1);
    expect(summary.steps).toBeUndefined();
  }, 20_000);

  it("broadcast with stages: members leave the room newest first, every delivery expected of them is accounted", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const plan = planSchema.parse({
      name: "stages broadcast",
      target: { url: server.url, connectTimeout: "2s" },
      connections: {
        count: 4,
        stages: [
          { duration: "1s", target: 4 },
          { duration: "1s", target: 4 },
          { duration: "1s", target: 0 },
        ],
      },
      scenario: { kind: "broadcast", message: { rate: 10, timeout: "5s" }, duration: "30s" },
    } satisfies PlanInput);
    const frames: EngineFrame[] = [];
    const outcome = await runShard(plan, { startAt: Date.now() + 50, onFrame: (f) => frames.push(f) });
    expect(outcome.status).toBe("completed");
    const t = outcome.totals;
    expect([t.opened, t.closed, t.lost]).toEqual([4, 4, 0]);
    expect(t.received).toBe(t.sent);
    // Members that joined later or left earlier expect fewer copies: the count follows the room,
    // and copies the server still hands a leaving member of later messages are neither expected nor errors.
    expect(t.deliveries!.expected).toBeGreaterThan(0);
    expect(t.deliveries!.expected).toBeLessThan(t.sent * 3);
    expect(t.deliveries).toEqual({ expected: t.deliveries!.expected, received: t.deliveries!.expected, lost: 0, remote: 0 });
    expect(total(frames, COUNTERS.deliveriesReceived)).toBe(t.deliveries!.expected);
    expect(total(frames, "errors.protocol")).toBe(0);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
  }, 20_000);
});
