import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startWsEchoServer } from "@volley/targets";
import { runSweep, sweepPlan } from "./engine-test-kit";
import type { EngineFrame } from "./types";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

/** Blocks this process's event loop for `ms`: the agent, not the server, is then the bottleneck (bounded, once). */
function blockEventLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: timers, sends and replies all wait
  }
}

const p50Ms = (f: EngineFrame) => mergeEncoded([f.histograms[HISTOGRAMS.messageLatency]!]).getValueAtPercentile(50) / 1000;

describe("sweep steps judged honestly", () => {
  it("a step's warm-up sends at its rate but is left out of its judgement: a cold start does not break stopWhen", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const plan = sweepPlan(server.url, { from: 20, step: 20, steps: 2, warmup: "1s", hold: "1s", gap: "1s", stopWhen: { p50: "100ms" } });
    let stall: NodeJS.Timeout | undefined;
    cleanup.push(() => clearTimeout(stall));
    // Connections open in interval 0; step 0 warms up over interval 1 and holds over 2. The ramp's
    // frame comes as interval 1 begins: stalling the server from 0.05 s into it for 0.85 s makes the
    // warm-up's replies slow, all of them released before its hold begins.
    const { outcome, frames, summary } = await runSweep(plan, (f) => {
      if (f.index === 0 && !stall) stall = setTimeout(() => server.stall(850), 50);
    });

    expect(outcome.status).toBe("completed");
    expect(outcome.sweepStopped).toBeUndefined();
    // Warm-ups (intervals 1 and 4) send at their step's rate, flagged warm-up and in no step; holds are 2 and 5.
    expect(frames.filter((f) => f.warmup).map((f) => [f.index, f.counters[COUNTERS.sent]])).toEqual([
      [1, 20],
      [4, 40],
    ]);
    expect(frames.filter((f) => f.step).map((f) => [f.index, f.step!.index, f.counters[COUNTERS.sent]])).toEqual([
      [2, 0, 20],
      [5, 1, 40],
    ]);
    expect(outcome.totals.sent).toBe(2 * 20 + 2 * 40);
    expect(outcome.totals.expected).toBe(outcome.totals.sent);
    // The cold second really was slow; judged from it, step 0 would have broken p50 <= 100ms.
    expect(p50Ms(frames.find((f) => f.index === 1)!)).toBeGreaterThan(100);
    expect(summary.steps!.map((s) => [s.plannedRate, s.seconds, s.failed, s.generatorLimited])).toEqual([
      [20, 1, false, false],
      [40, 1, false, false],
    ]);
    expect(summary.capacity).toMatchObject({ rate: 40, lowerBound: true, agentSaturated: false, endedBy: null });
  }, 30_000);

  it("a step where the agent was saturated is marked generator-limited, decides nothing, and stops the sweep with the reason", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const plan = sweepPlan(server.url, { from: 20, step: 20, steps: 3, hold: "1s", gap: "1s", stopWhen: { p99: "10s" } });
    let block: NodeJS.Timeout | undefined;
    cleanup.push(() => clearTimeout(block));
    // Holds: step 0 over interval 1, step 1 over 3. The gap's frame comes as interval 3 begins.
    const { outcome, frames, summary } = await runSweep(plan, (f) => {
      if (f.index === 2 && !block) block = setTimeout(() => blockEventLoop(400), 100);
    });

    expect(outcome.status).toBe("completed");
    expect(outcome.sweepStopped).toMatch(
      /^step 1 \(rate 40 per aggregate\) was limited by the agent, not the server \(the agent was saturated in 1 of 1 s: .*event-loop delay max \d+(\.\d+)? ms > 250 ms.*\); the sweep stops \(sweep.onSaturated: stop\)/,
    );
    const stepped = frames.filter((f) => f.step);
    expect(stepped.map((f) => [f.step!.index, f.step!.failed ?? false, f.step!.generatorLimited !== undefined])).toEqual([
      [0, false, false],
      [1, false, true],
    ]);
    // Nothing is sent after it: step 2 never ran.
    expect(outcome.totals.sent).toBe(20 + 40);

    const [s0, s1] = summary.steps!;
    expect(s0).toMatchObject({ generatorLimited: false, generatorReason: null, failed: false });
    expect(s1).toMatchObject({ generatorLimited: true, failed: false, saturated: true });
    expect(s1!.generatorReason).toMatch(/event-loop delay max/);
    // The capacity is what held before it, as a lower bound, and says why the search ended.
    expect(summary.capacity).toMatchObject({ rate: 20, step: 0, lowerBound: true, agentSaturated: true });
    expect(summary.capacity!.endedBy).toMatch(/^the step at 40\/s per aggregate was limited by the load generator, not the server \(the agent was saturated/);
  }, 30_000);

  it("onSaturated: retry runs a generator-limited step again at the same rate, and the sweep goes on", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const plan = sweepPlan(server.url, { from: 20, step: 20, steps: 3, hold: "1s", gap: "1s", onSaturated: "retry", stopWhen: { p99: "10s" } });
    let block: NodeJS.Timeout | undefined;
    cleanup.push(() => clearTimeout(block));
    const { outcome, frames, summary } = await runSweep(plan, (f) => {
      if (f.index === 2 && !block) block = setTimeout(() => blockEventLoop(400), 100);
    });

    expect(outcome.status).toBe("completed");
    expect(outcome.sweepStopped).toBeUndefined();
    // Slots: step 0, step 1 (limited), step 1 again, step 2.
    expect(
      frames.filter((f) => f.step).map((f) => [f.index, f.step!.index, f.step!.rate, f.step!.attempt ?? 0, f.step!.generatorLimited !== undefined]),
    ).toEqual([
      [1, 0, 20, 0, false],
      [3, 1, 40, 0, true],
      [5, 1, 40, 1, false],
      [7, 2, 60, 0, false],
    ]);
    expect(outcome.totals.sent).toBe(20 + 40 + 40 + 60);
    expect(outcome.totals.expected).toBe(outcome.totals.sent);

    // The step is reported once, by its clean run, with why it was retried.
    expect(summary.steps!.map((s) => [s.plannedRate, s.sent, s.generatorLimited, s.attempts ?? 1])).toEqual([
      [20, 20, false, 1],
      [40, 40, false, 2],
      [60, 60, false, 1],
    ]);
    expect(summary.steps![1]!.retryReason).toMatch(/event-loop delay max/);
    expect(summary.capacity).toMatchObject({ rate: 60, lowerBound: true, agentSaturated: false });
  }, 30_000);
});
