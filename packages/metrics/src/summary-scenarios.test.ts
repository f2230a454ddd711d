import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, runSummarySchema } from "@volley/contracts";
import type { FrameLike } from "./aggregate";
import { IntervalRecorder } from "./interval-recorder";
import { summarizeRun } from "./summarize-run";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

function frame(index: number, fill: (r: IntervalRecorder) => void, warmup = false): FrameLike {
  const r = new IntervalRecorder();
  fill(r);
  return { index, startedAt: 1000 * index, durationMs: 1000, warmup, ...r.take(), health };
}

describe("run summary of broadcast and storm frames", () => {
  it("sums deliveries over shards, merges their latency, and keeps remote ones out of the ratio", () => {
    const shard = (received: number, lost: number, remote: number, us: number) =>
      frame(0, (r) => {
        r.increment(COUNTERS.sent, 10);
        r.increment(COUNTERS.deliveriesExpected, received - remote + lost);
        r.increment(COUNTERS.deliveriesReceived, received);
        r.increment(COUNTERS.deliveriesLost, lost);
        r.increment(COUNTERS.deliveriesRemote, remote);
        for (let i = 0; i < received - remote; i++) r.recordMicros(HISTOGRAMS.deliveryLatency, us);
      });
    const summary = runSummarySchema.parse(summarizeRun([shard(30, 0, 0, 2000), shard(25, 5, 5, 8000)], []));
    expect(summary.deliveries).toMatchObject({ expected: 55, received: 55, lost: 5, remote: 5, ratio: round((100 * 50) / 55) });
    expect(summary.deliveries!.latency.count).toBe(50);
    expect(summary.deliveries!.latency.max).toBeCloseTo(8, 1);
    expect(summary.timings!.delivery.count).toBe(50);
    expect(summary.canary).toBeUndefined();
  });

  it("reports the canary apart from the crowd's messages", () => {
    const frames = [0, 1].map((i) =>
      frame(i, (r) => {
        r.increment(COUNTERS.sent, 100);
        r.increment(COUNTERS.received, 100);
        for (let k = 0; k < 100; k++) r.recordMicros(HISTOGRAMS.messageLatency, 1000);
        r.increment(COUNTERS.canarySent, 1);
        r.increment(COUNTERS.canaryReceived, i === 0 ? 1 : 0);
        r.increment(COUNTERS.canaryLost, i === 0 ? 0 : 1);
        if (i === 0) r.recordMicros(HISTOGRAMS.canaryLatency, 250_000);
      }),
    );
    const summary = runSummarySchema.parse(summarizeRun(frames, []));
    expect(summary.messages.sent).toBe(200);
    expect(summary.latency.max).toBeCloseTo(1, 1);
    expect(summary.canary).toMatchObject({ sent: 2, received: 1, lost: 1 });
    expect(summary.canary!.latency.p50).toBeCloseTo(250, 0);
    expect(summary.timings!.canary).toEqual(summary.canary!.latency);
    expect(summary.deliveries).toBeUndefined();
  });
});

const round = (n: number) => Math.round(n * 100) / 100;
