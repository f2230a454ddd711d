import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { encodeHistogram, createHistogram, recordMicros } from "./histogram";
import { IntervalMerger } from "./interval-merger";
import { IntervalRecorder } from "./interval-recorder";
import { mergeTimeline } from "./aggregate";
import { RunTally, type TallyFrame } from "./run-tally";

const health = { cpu: 5, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 80, sendLagMaxMs: 1, saturated: false };

function frame(index: number, shardId: string, latenciesMs: number[]): TallyFrame {
  const r = new IntervalRecorder();
  for (const ms of latenciesMs) {
    r.recordMicros(HISTOGRAMS.messageLatency, ms * 1000);
    r.increment(COUNTERS.sent);
    r.increment(COUNTERS.received);
  }
  return { index, shardId, agentId: `agt_${shardId}`, startedAt: 1_000_000 + index * 1000, durationMs: 1000, warmup: false, ...r.take(), health };
}

/** A stored row damaged after ingest: the right cookie, then bytes that do not inflate. */
const damaged = Buffer.from([0x1c, 0x84, 0x93, 0x14, 0, 0, 0, 4, 1, 2, 3, 4]).toString("base64");

describe("a stored histogram that cannot be decoded", () => {
  const frames = [frame(0, "a", [10, 20]), frame(0, "b", [30]), frame(1, "a", [40]), frame(1, "b", [50, 60])];
  frames[1]!.histograms[HISTOGRAMS.messageLatency] = damaged;
  frames[3]!.histograms[HISTOGRAMS.messageLatency] = "not a histogram";

  it("is left out of the summary and named there; every count and the other histograms stay", () => {
    const tally = new RunTally();
    for (const f of frames) tally.add(f);
    const summary = tally.summary(["latency.p95 < 200ms"]);
    expect(summary.messages.sent).toBe(6);
    expect(summary.messages.received).toBe(6);
    expect(summary.latency.count).toBe(3); // 10, 20, 40 ms: the two damaged histograms' 3 values are left out
    expect(summary.leftOut).toEqual({
      histograms: 2,
      metrics: [{ metric: HISTOGRAMS.messageLatency, count: 2, intervals: [0, 1] }],
      message: expect.stringMatching(/^2 stored histograms could not be read .*2 of message\.latency \(intervals 0, 1\)/),
    });
    expect(tally.analysis().spectra[HISTOGRAMS.messageLatency]).toBeDefined();
  });

  it("is noted once however often its frame is read again, and a clean run has no note", () => {
    const tally = new RunTally();
    tally.add(frames[1]!);
    tally.leftOut.add(createHistogram(64), damaged, { metric: HISTOGRAMS.messageLatency, index: 0, shard: "b" });
    expect(tally.leftOut.note()?.histograms).toBe(1);
    const clean = new RunTally();
    clean.add(frame(0, "a", [10]));
    expect(clean.summary([]).leftOut).toBeUndefined();
  });

  it("leaves a second's merged point with its counts and the readable histograms", () => {
    const points = mergeTimeline(frames);
    expect(points.map((p) => [p.index, p.sent, p.received])).toEqual([
      [0, 3, 3],
      [1, 3, 3],
    ]);
    expect(points[0]!.max).toBeCloseTo(20, 0);
    const m = new IntervalMerger(1);
    m.add(frames[3]!);
    expect(m.point().p50).toBeNull();
  });

  it("is not confused with a good histogram: a valid one always adds", () => {
    const h = createHistogram(32);
    recordMicros(h, 1234);
    const tally = new RunTally();
    expect(tally.leftOut.add(createHistogram(64), encodeHistogram(h), { metric: "x", index: 0, shard: "a" })).toBe(true);
    expect(tally.leftOut.note()).toBeUndefined();
  });
});
