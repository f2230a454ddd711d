import { describe, expect, it } from "vitest";
import { ERROR_SAMPLES_PER_CLASS, runSummarySchema } from "@volley/contracts";
import type { FrameLike } from "./aggregate";
import { IntervalRecorder } from "./interval-recorder";
import { summarizeRun } from "./summarize-run";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

function frame(index: number, samples: FrameLike["samples"], errors: Record<string, number> = {}): FrameLike {
  const r = new IntervalRecorder();
  r.increment("messages.sent", 10);
  for (const [cls, n] of Object.entries(errors)) r.increment(`errors.${cls}`, n);
  return { index, startedAt: 1000 * index, durationMs: 1000, warmup: false, ...r.take(), health, samples };
}

describe("error samples in the run summary", () => {
  it("keeps per class the first distinct texts in interval order, apart from a flow's unmatched samples", () => {
    const frames = [
      // Stored out of order (two shards): interval 2 arrives before interval 1.
      frame(2, [{ kind: "error", event: "closed", data: "close 1011 (internal error): restarting" }], { closed: 1 }),
      frame(
        1,
        [
          { kind: "error", event: "closed", data: "close 1008 (policy violation): rate limit" },
          { kind: "error", event: "handshake", data: "connect: HTTP 503" },
          { event: "presence", data: '{"user":"ann"}' },
        ],
        { closed: 1, handshake: 1 },
      ),
      frame(3, [{ kind: "error", event: "closed", data: "close 1008 (policy violation): rate limit" }], { closed: 1 }),
    ];
    const summary = runSummarySchema.parse(summarizeRun(frames, []));
    expect(summary.errorSamples).toEqual({
      closed: ["close 1008 (policy violation): rate limit", "close 1011 (internal error): restarting"],
      handshake: ["connect: HTTP 503"],
    });
    // The flow section has only the unmatched message, never the errors.
    expect(summary.flow?.samples).toEqual([{ event: "presence", data: '{"user":"ann"}' }]);
  });

  it("keeps at most ERROR_SAMPLES_PER_CLASS per class, and has no errorSamples (nor a flow section) when none were sent", () => {
    const many = Array.from({ length: 12 }, (_, i) => frame(i, [{ kind: "error" as const, event: "protocol", data: `HTTP 50${i % 10}` }], { protocol: 1 }));
    expect(summarizeRun(many, []).errorSamples?.protocol).toHaveLength(ERROR_SAMPLES_PER_CLASS);
    expect(summarizeRun(many, []).flow).toBeUndefined();
    const none = summarizeRun([frame(0, null, { closed: 3 })], []);
    expect(none.errorSamples).toBeUndefined();
    expect(none.errors).toEqual({ closed: 3 });
  });
});
