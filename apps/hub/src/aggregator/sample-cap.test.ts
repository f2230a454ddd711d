import { describe, expect, it } from "vitest";
import type { IntervalFrame } from "@volley/contracts";
import { SampleCap, SAMPLES_PER_EVENT } from "./sample-cap";

const health = { cpu: 1, eventLoopDelayMs: { p50: 0, max: 0 }, rssMb: 1, sendLagMaxMs: 0, saturated: false };
const frame = (seq: number, samples: IntervalFrame["samples"]): IntervalFrame => ({
  runId: "run_1",
  shardId: "shd_1",
  agentId: "agt_1",
  seq,
  index: seq,
  startedAt: seq * 1000,
  durationMs: 1000,
  warmup: false,
  counters: {},
  histograms: {},
  health,
  samples,
});

describe("SampleCap", () => {
  it("gives error samples (per class) a budget apart from a flow's unmatched samples of the same name", () => {
    const cap = new SampleCap();
    const unmatched = Array.from({ length: SAMPLES_PER_EVENT }, (_, i) => ({ event: "closed", data: `event ${i}` }));
    const errors = [{ event: "closed", data: "close 1008 (policy violation)", kind: "error" as const }];
    const { frames } = cap.apply("run_1", [frame(0, unmatched), frame(1, errors), frame(2, [{ event: "closed", data: "one too many" }])]);
    expect(frames[0]!.samples).toHaveLength(SAMPLES_PER_EVENT);
    // The flow event "closed" used up its budget; the error class "closed" still has all of its own.
    expect(frames[1]!.samples).toEqual(errors);
    expect(frames[2]!.samples).toEqual([]);
  });
});
