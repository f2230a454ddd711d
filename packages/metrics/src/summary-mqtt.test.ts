import { describe, expect, it } from "vitest";
import { COUNTERS, runSummarySchema } from "@volley/contracts";
import type { FrameLike } from "./aggregate";
import { IntervalRecorder } from "./interval-recorder";
import { RunTally } from "./run-tally";
import { summarizeRun } from "./summarize-run";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

function frame(index: number, shardId: string, fill: (r: IntervalRecorder) => void): FrameLike & { shardId: string } {
  const r = new IntervalRecorder();
  fill(r);
  return { index, shardId, startedAt: 1000 * index, durationMs: 1000, warmup: false, ...r.take(), health };
}

describe("run summary of MQTT counters", () => {
  it("sums acknowledged publishes and retained copies over shards and intervals, the live tally alike", () => {
    const frames = [0, 1].flatMap((i) =>
      ["a", "b"].map((shard) =>
        frame(i, shard, (r) => {
          r.increment(COUNTERS.sent, 10);
          r.increment(COUNTERS.mqttAcked, 9);
          if (shard === "b" && i === 0) r.increment(COUNTERS.mqttRetained, 2);
        }),
      ),
    );
    const summary = runSummarySchema.parse(summarizeRun(frames, []));
    expect(summary.mqtt).toEqual({ acked: 36, retained: 2 });
    const tally = new RunTally();
    for (const f of frames) tally.add(f);
    expect(tally.summary([]).mqtt).toEqual({ acked: 36, retained: 2 });
  });

  it("is absent for runs without MQTT counters", () => {
    const summary = summarizeRun([frame(0, "a", (r) => r.increment(COUNTERS.sent, 10))], []);
    expect(summary.mqtt).toBeUndefined();
  });
});
