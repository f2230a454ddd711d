import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { IntervalRecorder } from "./interval-recorder";
import { mergeTimeline, summarizeFrames, type FrameLike } from "./aggregate";
import { createHistogram, recordMicros } from "./histogram";
import { evaluateThresholds } from "./thresholds";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

function frame(index: number, values: number[], warmup = false): FrameLike {
  const r = new IntervalRecorder();
  for (const v of values) {
    r.recordMicros(HISTOGRAMS.messageLatency, v);
    r.increment(COUNTERS.sent);
    r.increment(COUNTERS.received);
  }
  return { index, startedAt: 1000 * index, durationMs: 1000, warmup, ...r.take(), health };
}

describe("aggregation", () => {
  it("merged percentiles equal those of the union of all samples", () => {
    // Two shards with deliberately different distributions: averaging their p99s would be wrong.
    const a = Array.from({ length: 1000 }, (_, i) => 1000 + i);
    const b = Array.from({ length: 100 }, (_, i) => 50_000 + 100 * i);
    const summary = summarizeFrames([frame(0, a), frame(0, b)]);
    const union = createHistogram(64);
    for (const v of [...a, ...b]) recordMicros(union, v);
    expect(summary.latency.p99).toBe(Math.round(union.getValueAtPercentile(99)) / 1000);
    expect(summary.latency.p50).toBe(Math.round(union.getValueAtPercentile(50)) / 1000);
    expect(summary.messages.sent).toBe(1100);
  });

  it("excludes warm-up intervals from percentiles and rates but keeps totals", () => {
    const summary = summarizeFrames([frame(0, [900_000], true), frame(1, [1000, 1000])]);
    expect(summary.latency.max).toBeCloseTo(1, 2);
    expect(summary.messages.sent).toBe(3);
    expect(summary.messages.sendRate).toBe(2);
    expect(summary.intervals).toEqual({ measured: 1, warmup: 1, saturated: 0 });
  });

  it("merges a timeline per interval index", () => {
    const t = mergeTimeline([frame(1, [2000]), frame(0, [1000]), frame(1, [4000])]);
    expect(t.map((p) => [p.index, p.sent])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(t[1]?.max).toBeCloseTo(4, 1);
  });

  it("evaluates thresholds and says by how much they failed", () => {
    const s = summarizeFrames([frame(0, [300_000])]);
    const [lat, err, bad] = evaluateThresholds(["latency.p95 < 200ms", "errors.rate < 1%", "nope.p3 < 1"], s);
    expect(lat?.ok).toBe(false);
    expect(lat?.message).toMatch(/off by 100\.\d+ms/);
    expect(err?.ok).toBe(true);
    expect(bad?.message).toMatch(/unknown metric/);
  });
});
