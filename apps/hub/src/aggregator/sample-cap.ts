import type { IntervalFrame } from "@volley/contracts";
import { FLOW_SAMPLES_PER_EVENT } from "@volley/metrics";

/** Per run and event (or error class), this many samples are worth showing (the summary shows no more); the rest are not stored. */
export const SAMPLES_PER_EVENT = FLOW_SAMPLES_PER_EVENT;
/** A run whose server sends more distinct unmatched events than this keeps samples of the first ones only. */
const EVENTS_PER_RUN = 200;

type Sample = NonNullable<IntervalFrame["samples"]>[number];

/**
 * Caps the samples a run stores: every shard keeps up to flow.samples per event, so a run over many
 * agents and seconds would store thousands of the same few shapes. Kept in memory per hub (a hub
 * that restarts, or replicas sharing a run's stream, may each store up to the cap: the summary
 * shows the first SAMPLES_PER_EVENT per event either way).
 */
export class SampleCap {
  private readonly runs = new Map<string, Map<string, number>>();

  /**
   * The frames with their samples cut to what the run may still store, and an undo that gives the
   * budget back (the insert failed and the same frames will be stored again).
   */
  apply(runId: string, frames: IntervalFrame[]): { frames: IntervalFrame[]; undo: () => void } {
    if (!frames.some((f) => f.samples?.length)) return { frames, undo: () => {} };
    let counts = this.runs.get(runId);
    if (!counts) this.runs.set(runId, (counts = new Map()));
    const before = new Map(counts);
    const out = frames.map((f) => {
      if (!f.samples?.length) return f;
      const kept: Sample[] = [];
      for (const s of f.samples) {
        // Error samples (per class) and a flow's unmatched ones (per event) have budgets of their own.
        const key = s.kind === "error" ? `error:${s.event}` : s.event;
        const n = counts.get(key);
        if (n === undefined && counts.size >= EVENTS_PER_RUN) continue;
        if ((n ?? 0) >= SAMPLES_PER_EVENT) continue;
        counts.set(key, (n ?? 0) + 1);
        kept.push(s);
      }
      return { ...f, samples: kept };
    });
    return { frames: out, undo: () => this.runs.set(runId, before) };
  }

  /** The run's stream is retired: nothing more will be stored for it. */
  forget(runId: string): void {
    this.runs.delete(runId);
  }
}
