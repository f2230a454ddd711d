import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema } from "@volley/contracts";
import { mergeEncoded, summarizeRun } from "@volley/metrics";
import { total } from "./engine-test-kit";
import { loopWatch, pingThroughputPlan, startPingTarget, type PingTarget } from "./ping-target";
import { runShard } from "./run-shard";
import type { EngineFrame } from "./types";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const targets: PingTarget[] = [];
afterEach(() => {
  for (const t of targets.splice(0)) t.stop();
});

describe("a shard far beyond the agent's capacity", () => {
  it("keeps the event loop turning, sheds what is hopelessly late (counted, saturated), and stops sending within 1 s of an abort", async () => {
    const target = await startPingTarget();
    targets.push(target);
    const plan = planSchema.parse(pingThroughputPlan(target.url));
    const frames: EngineFrame[] = [];
    const controller = new AbortController();
    const watch = loopWatch();
    let startedAt = 0;
    const running = runShard(plan, {
      startAt: Date.now() + 50,
      onFrame: (f) => frames.push(f),
      onStart: () => (startedAt = performance.now()),
      signal: controller.signal,
    });
    // Long enough to fall more than a second behind (shedding starts there) on any machine.
    await sleep(4500);
    controller.abort("stopped by the test");
    const abortedAt = performance.now();
    const outcome = await running;
    const endedInMs = performance.now() - abortedAt;
    const blockedMs = watch.stop();

    await sleep(1000);
    const atOneSecond = await target.count();
    await sleep(1500);
    const later = await target.count();

    console.info(
      `overload: loop blocked at most ${Math.round(blockedMs)} ms; sent ${outcome.totals.sent}, shed ${outcome.totals.shed} in ${Math.round(abortedAt - startedAt)} ms; shard ended ${endedInMs.toFixed(1)} ms after the abort; server count ${later}`,
    );
    expect(outcome.status).toBe("aborted");
    expect(startedAt).toBeGreaterThan(0);
    // The loop never stalled (it was ~23 s before the engine yielded per turn), so heartbeats and the abort get through.
    expect(blockedMs).toBeLessThan(500);
    expect(endedInMs).toBeLessThan(1000);
    // The server saw its last ping within 1 s of the abort.
    expect(later).toBe(atOneSecond);

    const { totals } = outcome;
    expect(totals.sent).toBeGreaterThan(1000);
    expect(totals.shed).toBeGreaterThan(0);
    // Every slot that came due was either sent or shed, and both carry their send lag.
    expect(total(frames, COUNTERS.sent)).toBe(totals.sent);
    expect(total(frames, COUNTERS.shed)).toBe(totals.shed);
    const lag = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.sendLag] ?? []));
    expect(lag.totalCount).toBe(totals.sent + totals.shed);
    expect(lag.maxValue / 1000).toBeGreaterThan(1000);
    // The frames say the agent, not the target, was the bottleneck.
    expect(frames.some((f) => f.health.saturated && (f.counters[COUNTERS.shed] ?? 0) > 0)).toBe(true);
    // And so does the run summary the API serves.
    const summary = summarizeRun(frames, []);
    expect(summary.messages).toMatchObject({ sent: totals.sent, shed: totals.shed });
    expect(summary.intervals.saturated).toBeGreaterThan(0);
  }, 60_000);
});
