import { durationMs, type Plan } from "@volley/contracts";
import { evaluateThresholds } from "@volley/metrics";
import { sleep } from "../util/wait";
import type { RunMeter } from "./run-meter";

/** A plan's abortOnFail thresholds, each with how long after the start its checks may begin. */
export function abortOnFailThresholds(plan: Plan): Array<{ expression: string; delayMs: number }> {
  return plan.thresholds.flatMap((t) =>
    typeof t !== "string" && t.abortOnFail ? [{ expression: t.expression, delayMs: t.delay === undefined ? 0 : durationMs(t.delay) }] : [],
  );
}

/**
 * Judges a running run's abortOnFail thresholds on the run meter's merged state of every frame
 * stored so far (the state the final verdict is read from, so an early stop never contradicts it).
 * It reads nothing itself: the meter folded each frame once.
 */
export class ThresholdWatch {
  constructor(
    private readonly meter: RunMeter,
    private readonly watched: ReadonlyArray<{ expression: string; delayMs: number }>,
    /** The run's start instant (epoch ms, hub clock): delays count from here. */
    private readonly startAt: number,
  ) {}

  /** The reason to stop the run (a due threshold broken on what was measured so far), or null. */
  async check(now = Date.now()): Promise<string | null> {
    const due = this.watched.filter((t) => now >= this.startAt + t.delayMs);
    if (due.length === 0) return null;
    await this.meter.poll();
    // Warm-up measures a server still settling in; a verdict on it alone would be unfair.
    if (this.meter.tally.measured === 0) return null;
    // A metric not measured yet (null) is no breach: the final verdict still judges it.
    const broken = evaluateThresholds(
      due.map((t) => t.expression),
      this.meter.tally.measuredSummary(),
    ).filter((r) => !r.ok && r.actual !== null);
    if (broken.length === 0) return null;
    return `${broken.map((r) => `threshold "${r.expression}" broke (${r.message})`).join("; ")}; the run was stopped early (abortOnFail)`;
  }

  /** Checks every `everyMs` until a threshold breaks (its reason) or `signal` aborts (null). */
  async watch(everyMs: number, signal: AbortSignal, onError: (err: unknown) => void): Promise<string | null> {
    while (!signal.aborted) {
      await sleep(everyMs, signal);
      if (signal.aborted) return null;
      try {
        const reason = await this.check();
        if (reason) return reason;
      } catch (err) {
        // A failed read (database blip) skips one check; the run goes on and the final verdict still holds.
        onError(err);
      }
    }
    return null;
  }
}
