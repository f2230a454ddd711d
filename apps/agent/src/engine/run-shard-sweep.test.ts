import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema } from "@volley/contracts";
import { startWsEchoServer } from "@volley/targets";
import { runSweep, sweepPlan, total } from "./engine-test-kit";
import { shardPreflight } from "./shard-preflight";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

describe("sweep", () => {
  it("steps the aggregate rate 50, 100, 150 for 1 s holds with 1 s gaps, each on its own interval", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const plan = sweepPlan(server.url, { from: 50, step: 50, steps: 3, hold: "1s", gap: "1s" });
    const { outcome, frames, summary } = await runSweep(plan);

    expect(outcome.status).toBe("completed");
    expect(outcome.sweepStopped).toBeUndefined();
    const t = outcome.totals;
    expect(t.opened).toBe(4);
    expect(t.lost).toBe(0);
    expect(t.received).toBe(t.sent);
    // Exactly the holds' slots: 50 + 100 + 150, and nothing in the ramp or the gaps.
    expect(t.sent).toBe(300);
    expect(t.expected).toBe(300);

    // Connections open within the first interval; steps start on interval boundaries 1, 3 and 5.
    const stepped = frames.filter((f) => f.step);
    expect(stepped.map((f) => [f.index, f.step!.index, f.step!.rate, f.step!.per])).toEqual([
      [1, 0, 50, "aggregate"],
      [3, 1, 100, "aggregate"],
      [5, 2, 150, "aggregate"],
    ]);
    expect(stepped.every((f) => f.durationMs === 1000 && !f.step!.failed)).toBe(true);
    // Ramp and gap intervals send nothing; every hold sends exactly its rate.
    for (const f of frames) expect(f.counters[COUNTERS.sent] ?? 0, `interval ${f.index}`).toBe(f.step ? f.step.rate : 0);
    // Only the holds are sending time: the ramp, the gaps and the final drain are not.
    for (const f of frames) expect(f.activeMs, `interval ${f.index}`).toBe(f.step ? 1000 : 0);
    // So the whole run's send rate is over the 3 s of holds (300/3), not over its ~7 s.
    expect(summary.messages.sendRate).toBe(100);
    // The sweep ends with the last hold (plus the wait for its replies).
    expect(frames.length).toBeLessThanOrEqual(8);

    expect(summary.steps).toHaveLength(3);
    for (const step of summary.steps!) {
      expect(step.failed).toBe(false);
      expect(step.aborted).toBe(false);
      expect(step.seconds).toBe(1);
      expect(Math.abs(step.sendRate - step.plannedRate) / step.plannedRate).toBeLessThan(0.03);
      expect(step.latency.count).toBeGreaterThan(0);
    }
    expect(summary.steps!.map((s) => s.plannedRate)).toEqual([50, 100, 150]);
    // No stop condition: no capacity to report.
    expect(summary.capacity).toBeUndefined();
  }, 30_000);

  it("per connection: every open connection sends the step's rate, phased across the interval", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const plan = sweepPlan(server.url, { from: 10, step: 10, steps: 2, hold: "1s", gap: "1s" }, { per: "connection" });
    const { outcome, frames, summary } = await runSweep(plan);
    expect(outcome.status).toBe("completed");
    expect(outcome.totals.sent).toBe(4 * 10 + 4 * 20);
    expect(outcome.totals.expected).toBe(outcome.totals.sent);
    expect(outcome.totals.lost).toBe(0);
    expect(frames.filter((f) => f.step).map((f) => [f.step!.rate, f.counters[COUNTERS.sent]])).toEqual([
      [10, 40],
      [20, 80],
    ]);
    expect(summary.steps!.map((s) => [s.plannedRate, s.per, s.sendRate])).toEqual([
      [10, "connection", 40],
      [20, "connection", 80],
    ]);
  }, 30_000);

  it("stops at the step whose own measurements break stopWhen; capacity is the last rate that held", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const plan = sweepPlan(server.url, { from: 20, step: 20, steps: 6, hold: "1s", gap: "1s", stopWhen: { p50: "100ms" } });
    let stall: NodeJS.Timeout | undefined;
    cleanup.push(() => clearTimeout(stall));
    // Step 1's frame arrives as its hold ends; step 2's hold begins 1 s later. Stalling the server
    // from 0.1 s into that hold for 0.8 s makes most of step 2's replies several hundred ms late,
    // all of them released before the hold ends.
    const { outcome, frames, summary } = await runSweep(plan, (f) => {
      if (f.step?.index === 1 && !stall) stall = setTimeout(() => server.stall(800), 1100);
    });

    expect(outcome.status).toBe("completed");
    expect(outcome.sweepStopped).toMatch(/^step 2 \(rate 60 per aggregate\) broke stopWhen: p50 \d+(\.\d+)?ms > 100ms$/);
    const stepped = frames.filter((f) => f.step);
    expect(stepped.map((f) => [f.step!.index, f.step!.rate, f.step!.failed ?? false])).toEqual([
      [0, 20, false],
      [1, 40, false],
      [2, 60, true],
    ]);
    // Nothing is sent after the failed step, and the stall lost nothing (its replies came within the timeout).
    const lastStepped = stepped.at(-1)!.index;
    expect(frames.filter((f) => f.index > lastStepped).every((f) => (f.counters[COUNTERS.sent] ?? 0) === 0)).toBe(true);
    expect(outcome.totals.sent).toBe(20 + 40 + 60);
    expect(total(frames, COUNTERS.lost)).toBe(0);

    expect(summary.steps!.map((s) => s.failed)).toEqual([false, false, true]);
    expect(summary.steps![2]!.reason).toMatch(/p50/);
    expect(summary.capacity).toMatchObject({
      slo: "p50 <= 100ms",
      rate: 40,
      per: "aggregate",
      step: 1,
      sendRate: 40,
      lowerBound: false,
      agentSaturated: false,
    });
  }, 30_000);

  it("a sweep that never breaks its SLO reports its last rate as a lower bound of the capacity", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const plan = sweepPlan(server.url, { from: 20, step: 20, steps: 2, hold: "1s", gap: "1s", stopWhen: { p99: "10s" } });
    const { outcome, summary } = await runSweep(plan);
    expect(outcome.status).toBe("completed");
    expect(summary.steps!.map((s) => s.failed)).toEqual([false, false]);
    expect(summary.capacity).toMatchObject({ rate: 40, step: 1, lowerBound: true, agentSaturated: false });
  }, 30_000);

  it("refuses stages with a sweep, and a duration no step fits in, in the plan schema's own words", () => {
    const base = sweepPlan("ws://127.0.0.1:9/echo", { step: 1, hold: "3s" });
    const short = { ...base, scenario: { ...base.scenario, duration: "2s" } };
    expect(shardPreflight(short, { maxConnections: 10 })).toMatch(/^scenario.duration is 2000 ms, shorter than one sweep step .*set duration to at least 3s/);
    const staged = { ...base, connections: { ...base.connections, stages: [{ duration: "1s", target: 4 }] } };
    expect(shardPreflight(staged, { maxConnections: 10 })).toMatch(/^sweep cannot be combined with connections.stages/);
    // A plan that validates is never refused by the run at once: the schema refuses these, saying the same.
    for (const plan of [short, staged]) {
      const issue = planSchema.safeParse(plan).error?.issues[0];
      expect(issue && `${issue.path.join(".")} ${issue.message}`).toBe(shardPreflight(plan, { maxConnections: 10 }));
    }
  });
});
