import type { RunSummary } from "@volley/contracts";
import { addEncoded, type Histogram } from "./histogram";

export type LeftOutNote = NonNullable<RunSummary["leftOut"]>;

/** Intervals a note names in its message before it says "and N more". */
const NAMED_INTERVALS = 5;

/**
 * Stored histograms a reader could not decode, quarantined: left out of every merge, counted and
 * named, so one damaged row (written by an older version, or by damage to the database; the gateway
 * refuses undecodable histograms at ingest) leaves the rest of the run readable instead of making
 * every reader of it fail. The one way readers of stored frames decode a histogram (`add`).
 */
export class LeftOutHistograms {
  /** shard, second and metric of each one left out: a frame read twice (a re-merge) is noted once. */
  private readonly seen = new Set<string>();
  private readonly byMetric = new Map<string, { count: number; intervals: Set<number> }>();

  /**
   * Adds an encoded histogram to `targets` (as addEncoded), or, when it cannot be decoded, adds
   * nothing and notes it. addEncoded reads the whole encoding before it adds anything, so a
   * histogram is added whole or not at all; any error it throws is the encoding's (it touches
   * nothing else), whatever the error's class.
   */
  add(targets: Histogram | readonly Histogram[], base64: string, at: { metric: string; index: number; shard: string }): boolean {
    try {
      addEncoded(targets, base64);
      return true;
    } catch {
      const key = `${at.shard}\u0000${at.index}\u0000${at.metric}`;
      if (this.seen.has(key)) return false;
      this.seen.add(key);
      let m = this.byMetric.get(at.metric);
      if (!m) this.byMetric.set(at.metric, (m = { count: 0, intervals: new Set() }));
      m.count++;
      m.intervals.add(at.index);
      return false;
    }
  }

  /** What was left out, for the summary; undefined when nothing was. */
  note(): LeftOutNote | undefined {
    if (this.seen.size === 0) return undefined;
    const metrics = [...this.byMetric.entries()]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([metric, m]) => ({ metric, count: m.count, intervals: [...m.intervals].sort((a, b) => a - b) }));
    const parts = metrics.map(({ metric, count, intervals }) => {
      const named = intervals.slice(0, NAMED_INTERVALS).join(", ");
      const more = intervals.length > NAMED_INTERVALS ? ` and ${intervals.length - NAMED_INTERVALS} more` : "";
      return `${count} of ${metric} (interval${intervals.length === 1 ? "" : "s"} ${named}${more})`;
    });
    const n = this.seen.size;
    return {
      histograms: n,
      metrics,
      message: `${n} stored histogram${n === 1 ? "" : "s"} could not be read and ${n === 1 ? "is" : "are"} left out of the percentiles: ${parts.join("; ")}. Their frames' counts are included.`,
    };
  }
}
