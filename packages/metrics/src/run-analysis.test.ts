import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { IntervalRecorder } from "./interval-recorder";
import { createHistogram, recordMicros } from "./histogram";
import { analyzeFrames, percentileSpectrum } from "./run-analysis";
import { latencySummary } from "./summary";
import { mergeTimeline } from "./aggregate";

const health = (over: Partial<{ cpu: number; saturated: boolean; lag: number }> = {}) => ({
  cpu: over.cpu ?? 10,
  eventLoopDelayMs: { p50: 1, max: 2 },
  rssMb: 50,
  sendLagMaxMs: over.lag ?? 0,
  saturated: over.saturated ?? false,
});

function frame(agentId: string, index: number, values: number[], opts: { warmup?: boolean; cpu?: number; saturated?: boolean; closed?: number } = {}) {
  const r = new IntervalRecorder();
  for (const v of values) {
    r.recordMicros(HISTOGRAMS.messageLatency, v);
    r.increment(COUNTERS.sent);
    r.increment(COUNTERS.received);
  }
  for (let i = 0; i < (opts.closed ?? 0); i++) {
    r.increment(COUNTERS.connectionsClosed);
    r.increment(COUNTERS.connectionsDropped);
  }
  return {
    agentId,
    shardId: `shd_${agentId}`,
    index,
    startedAt: 1000 * index,
    durationMs: 1000,
    warmup: opts.warmup ?? false,
    ...r.take(),
    health: health(opts),
  };
}

describe("percentile spectrum", () => {
  it("matches the histogram at every point, rises monotonically and ends at the max", () => {
    const h = createHistogram(64);
    for (let i = 1; i <= 10_000; i++) recordMicros(h, i * 10);
    const s = percentileSpectrum(h);
    expect(s[0]!.percentile).toBe(0);
    expect(s.at(-1)).toEqual({ percentile: 100, ms: Math.round(h.getValueAtPercentile(100)) / 1000, count: 10_000 });
    expect(s.at(-1)!.ms).toBeCloseTo(100, 0);
    for (let i = 1; i < s.length; i++) {
      expect(s[i]!.percentile).toBeGreaterThan(s[i - 1]!.percentile);
      expect(s[i]!.ms).toBeGreaterThanOrEqual(s[i - 1]!.ms);
    }
    const p50 = s.find((p) => p.percentile === 50)!;
    expect(p50.ms).toBe(Math.round(h.getValueAtPercentile(50)) / 1000);
    // The summary's named percentiles are points of their own: the chart's 99 % reads the table's p99.
    const summary = latencySummary(h);
    for (const [p, v] of [
      [90, summary.p90],
      [95, summary.p95],
      [99, summary.p99],
    ] as const)
      expect(s.find((pt) => pt.percentile === p)?.ms).toBe(v);
    // 10,000 samples resolve to about the 99.99th percentile, no further.
    expect(s.at(-2)!.percentile).toBeGreaterThan(99.9);
    expect(s.at(-2)!.percentile).toBeLessThanOrEqual(99.99);
  });

  it("is empty for an empty histogram", () => {
    expect(percentileSpectrum(createHistogram(64))).toEqual([]);
    expect(percentileSpectrum(undefined)).toEqual([]);
  });
});

describe("run analysis", () => {
  it("merges spectra across agents exactly, leaves warm-up out, and breaks counts and health down per agent", () => {
    const frames = [
      frame("agt_a", 0, [900_000], { warmup: true }),
      frame("agt_a", 1, [1000, 2000], { cpu: 95, saturated: true }),
      frame("agt_b", 1, [50_000], { closed: 2 }),
    ];
    const a = analyzeFrames(frames);
    const lat = a.spectra[HISTOGRAMS.messageLatency]!;
    expect(lat.at(-1)!.ms).toBeCloseTo(50, 0); // the warm-up 900 ms sample is not in it
    expect(lat.at(-1)!.count).toBe(3);
    expect(a.agents.map((x) => x.agentId)).toEqual(["agt_a", "agt_b"]);
    const [agA, agB] = a.agents;
    expect(agA).toMatchObject({ sent: 3, intervals: 2, saturated: 1, shards: 1, health: { cpuMax: 95 } });
    expect(agA!.latency.max).toBeCloseTo(2, 1);
    expect(agB).toMatchObject({ sent: 1, disconnects: 2, saturated: 0 });
  });

  it("timeline points carry loss, disconnects and the worst agent's health", () => {
    const [p] = mergeTimeline([frame("agt_a", 0, [1000], { cpu: 40, closed: 1 }), frame("agt_b", 0, [1000], { cpu: 80 })]);
    expect(p).toMatchObject({ disconnects: 1, lost: 0, health: { cpu: 80, agents: 2 } });
  });

  it("breaks deliveries down per agent for groups and broadcast, and leaves them out where there are none", () => {
    const deliveries = (agentId: string, received: number, us: number) => {
      const r = new IntervalRecorder();
      r.increment(COUNTERS.sent, 3);
      r.increment(COUNTERS.deliveriesExpected, received + 1);
      r.increment(COUNTERS.deliveriesReceived, received);
      r.increment(COUNTERS.deliveriesLost, 1);
      for (let i = 0; i < received; i++) r.recordMicros(HISTOGRAMS.deliveryLatency, us);
      return { agentId, shardId: `shd_${agentId}`, index: 0, startedAt: 0, durationMs: 1000, warmup: false, ...r.take(), health: health() };
    };
    const [a, b] = analyzeFrames([deliveries("agt_a", 9, 2000), deliveries("agt_b", 4, 8000)]).agents;
    expect(a!.delivery).toMatchObject({ received: 9, lost: 1, latency: { count: 9 } });
    expect(b!.delivery!.latency.p50).toBeCloseTo(8, 1);
    expect(a!.latency.count).toBe(0);
    expect(analyzeFrames([frame("agt_c", 0, [1000])]).agents[0]!.delivery).toBeUndefined();
  });
});
