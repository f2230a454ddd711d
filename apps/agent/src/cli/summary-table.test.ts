import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema } from "@volley/contracts";
import { IntervalRecorder, summarizeRun } from "@volley/metrics";
import { summaryTable } from "./summary-table";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

describe("volley-agent run's summary table", () => {
  it("marks a sweep step the agent limited with why, and the capacity as a lower bound", () => {
    const plan = planSchema.parse({
      name: "sweep",
      target: { url: "ws://127.0.0.1:9/echo" },
      connections: { count: 2 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "20s" },
      sweep: { from: 20, step: 20, steps: 3, hold: "1s", gap: "1s", stopWhen: { p99: "10s" } },
    });
    const why = "the agent was saturated in 1 of 1 s: CPU 97% > 90%";
    const frames = [0, 1].map((step) => {
      const r = new IntervalRecorder();
      r.increment(COUNTERS.sent, 20 * (step + 1));
      r.increment(COUNTERS.received, 20 * (step + 1));
      r.recordMicros(HISTOGRAMS.messageLatency, 2000);
      const limited = step === 1;
      return {
        index: 1 + 2 * step,
        startedAt: 0,
        durationMs: 1000,
        warmup: false,
        ...r.take(),
        health: { ...health, saturated: limited },
        step: { index: step, rate: 20 * (step + 1), per: "aggregate" as const, ...(limited ? { generatorLimited: why } : {}) },
      };
    });
    const text = summaryTable(summarizeRun(frames, [], plan));
    expect(text).toContain(`AGENT-LIMITED, not judged: ${why}`);
    expect(text).toContain("capacity (p99 <= 10000ms): ≥ 20/s per aggregate (step 0, sent 20/s)\n");
    expect(text).toContain(`warning: the step at 40/s per aggregate was limited by the load generator, not the server (${why}); that step decides nothing`);
  });

  it("says a search whose first step the agent limited found nothing, not a lower bound", () => {
    const plan = planSchema.parse({
      name: "sweep",
      target: { url: "ws://127.0.0.1:9/echo" },
      connections: { count: 2 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "20s" },
      sweep: { from: 20, step: 20, steps: 3, hold: "1s", gap: "1s", stopWhen: { p99: "10s" } },
    });
    const why = "the agent was saturated in 1 of 1 s: CPU 97% > 90%";
    const r = new IntervalRecorder();
    r.increment(COUNTERS.sent, 20);
    r.increment(COUNTERS.received, 20);
    r.recordMicros(HISTOGRAMS.messageLatency, 2000);
    const frame = {
      index: 1,
      startedAt: 0,
      durationMs: 1000,
      warmup: false,
      ...r.take(),
      health: { ...health, saturated: true },
      step: { index: 0, rate: 20, per: "aggregate" as const, generatorLimited: why },
    };
    const text = summaryTable(summarizeRun([frame], [], plan));
    expect(text).toContain("capacity (p99 <= 10000ms): not found — no step could be judged: the agent was the bottleneck from the first step\n");
    expect(text).toContain(`warning: the step at 20/s per aggregate was limited by the load generator, not the server (${why}); add agents and rerun`);
    expect(text).not.toContain("lower bound");
  });

  it("prints each error class's samples under the tables", () => {
    const r = new IntervalRecorder();
    r.increment(COUNTERS.sent, 10);
    r.increment("errors.closed", 3);
    const frame = {
      index: 0,
      startedAt: 0,
      durationMs: 1000,
      warmup: false,
      ...r.take(),
      health,
      samples: [{ kind: "error" as const, event: "closed", data: "close 1008 (policy violation): rate limit" }],
    };
    const text = summaryTable(summarizeRun([frame], []));
    expect(text).toContain("\nerrors.closed: close 1008 (policy violation): rate limit\n");
  });
});
