import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, THRESHOLD_METRIC_NAMES } from "@volley/contracts";
import { summarizeFrames } from "./aggregate";
import { IntervalRecorder } from "./interval-recorder";
import { evaluateThresholds, thresholdMetrics } from "./thresholds";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

describe("threshold metrics", () => {
  const r = new IntervalRecorder();
  r.increment(COUNTERS.sent, 10);
  r.increment(COUNTERS.canarySent, 2);
  r.increment(COUNTERS.canaryReceived, 2);
  r.recordMicros(HISTOGRAMS.canaryLatency, 250_000);
  r.recordMicros(HISTOGRAMS.firstMessage, 4_000);
  r.recordMicros(HISTOGRAMS.connect, 3_000);
  const summary = summarizeFrames([{ index: 0, startedAt: 0, durationMs: 1000, warmup: false, ...r.take(), health }]);

  it("has a value (or a null for not measured) for every name a plan may use, and no other", () => {
    expect(Object.keys(thresholdMetrics(summary)).sort()).toEqual([...THRESHOLD_METRIC_NAMES].sort());
  });

  it("reads canary, first message and connect times from the summary", () => {
    const [canary, first, connect] = evaluateThresholds(["canary.p99 < 500ms", "first_message.max < 1s", "connect.p95 > 10ms"], summary);
    expect(canary!.ok).toBe(true);
    expect(canary!.actual).toBeCloseTo(250, 0);
    expect(first!.actual).toBeCloseTo(4, 1);
    expect(connect).toMatchObject({ ok: false });
    expect(connect!.message).toMatch(/^connect.p95 = 3.\d+ms, limit > 10ms/);
  });

  it("keeps an unknown metric's message short: the suggestion, not the whole list", () => {
    const [bad] = evaluateThresholds(["latncy.p95 < 1s"], summary);
    expect(bad).toMatchObject({ ok: false, actual: null, message: 'unknown metric "latncy.p95" (did you mean "latency.p95"?)' });
  });
});
