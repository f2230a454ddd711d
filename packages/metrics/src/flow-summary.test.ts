import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, runSummarySchema } from "@volley/contracts";
import type { FrameLike } from "./aggregate";
import { FLOW_SAMPLES_PER_EVENT, FLOW_SAMPLES_TOTAL } from "./flow-summary";
import { IntervalRecorder } from "./interval-recorder";
import { summarizeRun } from "./summarize-run";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

function frame(index: number, fill: (r: IntervalRecorder) => void, opts: { warmup?: boolean; samples?: FrameLike["samples"] } = {}): FrameLike {
  const r = new IntervalRecorder();
  fill(r);
  return { index, startedAt: 1000 * index, durationMs: 1000, warmup: opts.warmup ?? false, ...r.take(), health, samples: opts.samples ?? null };
}

/** What a flow shard records: setup steps timed, a failed login, replies, and messages that matched nothing. */
function flowShard(index: number, loginUs: number[], failedLogins: number, warmup = false, samples: FrameLike["samples"] = null): FrameLike {
  return frame(
    index,
    (r) => {
      for (const us of loginUs) r.recordMicros("setup.login", us);
      for (const us of loginUs) r.recordMicros("setup.joined", us / 10);
      if (failedLogins > 0) r.increment("errors.setup.login", failedLogins);
      r.increment(COUNTERS.sent, 10);
      r.increment(COUNTERS.received, 10);
      for (let i = 0; i < 10; i++) r.recordMicros(HISTOGRAMS.messageLatency, 2000);
      for (let i = 0; i < 10; i++) r.recordMicros(`${HISTOGRAMS.messageLatency}.chat`, 2000);
      r.increment("events.message", 10);
      r.increment("events.presence", 4);
      r.increment("unmatched.presence", 4);
      r.increment(COUNTERS.unmatched, 4);
    },
    { warmup, samples },
  );
}

describe("run summary of flow frames", () => {
  it("times setup steps apart from messages, counts events and unmatched, and names failed steps in errors", () => {
    const frames = [
      // Setup happens during the ramp: warm-up frames' setup times count, as connect times do.
      flowShard(0, [100_000, 120_000], 1, true, [{ event: "presence", data: '{"user":"ann"}' }]),
      flowShard(1, [300_000], 0, false, [{ event: "presence", data: "<script>x</script>" }]),
      flowShard(1, [], 2),
    ];
    const summary = runSummarySchema.parse(summarizeRun(frames, ["messages.unmatched < 10", "messages.unmatched_rate < 50%", "setup.failed == 3"]));
    const flow = summary.flow!;
    expect(flow.setup.map((s) => [s.step, s.count, s.failed])).toEqual([
      ["login", 3, 3],
      ["joined", 3, 0],
    ]);
    expect(flow.setup[0]!.latency.max).toBeCloseTo(300, 0);
    expect(flow.setup[1]!.latency.max).toBeCloseTo(30, 0);
    // Setup times stay out of the round trip.
    expect(summary.latency.max).toBeCloseTo(2, 1);
    expect(flow.events).toEqual([
      { event: "message", received: 30, unmatched: 0 },
      { event: "presence", received: 12, unmatched: 12 },
    ]);
    expect(flow.unmatched).toBe(12);
    expect(flow.samples).toEqual([
      { event: "presence", data: '{"user":"ann"}' },
      { event: "presence", data: "<script>x</script>" },
    ]);
    // Per-kind round trips leave warm-up out, as the run's round trip does.
    expect(flow.kinds).toEqual([{ kind: "chat", latency: summary.latency }]);
    expect(summary.errors).toEqual({ "setup.login": 3 });
    expect(summary.thresholds.map((t) => [t.expression, t.ok, t.actual])).toEqual([
      ["messages.unmatched < 10", false, 12],
      ["messages.unmatched_rate < 50%", true, (100 * 12) / 42],
      ["setup.failed == 3", true, 3],
    ]);
  });

  it("keeps the first samples of each event in interval order, at most FLOW_SAMPLES_PER_EVENT", () => {
    const many = (index: number) => Array.from({ length: 15 }, (_, k) => ({ event: "tick", data: `${index}:${k}` }));
    // Stored rows may come in any order; the samples shown are the earliest seconds'.
    const frames = [2, 0, 1].map((i) => flowShard(i, [], 0, false, [...many(i), { event: "other", data: `o${i}` }]));
    const samples = summarizeRun(frames, []).flow!.samples;
    const ticks = samples.filter((s) => s.event === "tick").map((s) => s.data);
    expect(ticks).toHaveLength(FLOW_SAMPLES_PER_EVENT);
    expect(ticks.slice(0, 16)).toEqual([...many(0).map((s) => s.data), "1:0"]);
    expect(samples.filter((s) => s.event === "other").map((s) => s.data)).toEqual(["o0", "o1", "o2"]);
  });

  it("keeps at most FLOW_SAMPLES_TOTAL samples in all, an equal share per event so rare events still show", () => {
    // 8 events of 20 samples (160) and one rare event of 2.
    const samples = [
      ...Array.from({ length: 8 }, (_, e) => Array.from({ length: 20 }, (_, k) => ({ event: `e${e}`, data: `${e}:${k}` }))).flat(),
      { event: "rare", data: "r0" },
      { event: "rare", data: "r1" },
    ];
    const shown = summarizeRun([flowShard(0, [], 0, false, samples)], []).flow!.samples;
    expect(shown).toHaveLength(FLOW_SAMPLES_TOTAL);
    const per = (e: string) => shown.filter((s) => s.event === e).map((s) => s.data);
    expect(per("rare")).toEqual(["r0", "r1"]);
    // 98 left for 8 events: 12 or 13 each, the earliest of each.
    for (let e = 0; e < 8; e++) expect(per(`e${e}`)).toEqual(Array.from({ length: per(`e${e}`).length }, (_, k) => `${e}:${k}`));
    expect(Array.from({ length: 8 }, (_, e) => per(`e${e}`).length).every((n) => n === 12 || n === 13)).toBe(true);
  });

  it("times server push by its stamp apart from round trips", () => {
    const frames = [
      frame(0, (r) => {
        r.increment("events.ticker", 3);
        r.increment(COUNTERS.pushReceived, 2);
        r.increment(COUNTERS.pushClockAhead, 1);
        r.recordMicros(HISTOGRAMS.pushLatency, 5000);
        r.recordMicros(HISTOGRAMS.pushLatency, 7000);
      }),
    ];
    const flow = summarizeRun(frames, []).flow!;
    expect(flow.push).toMatchObject({ received: 2, clockAhead: 1, latency: { count: 2 } });
    expect(flow.setup).toEqual([]);
    expect(flow.unmatched).toBe(0);
  });

  it("has no flow section for runs without a flow, whose unmatched thresholds read 0", () => {
    const summary = summarizeRun([frame(0, (r) => r.increment(COUNTERS.sent, 5))], ["messages.unmatched == 0", "setup.failed == 0"]);
    expect(summary.flow).toBeUndefined();
    expect(summary.thresholds.every((t) => t.ok)).toBe(true);
  });
});
