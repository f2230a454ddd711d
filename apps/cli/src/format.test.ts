import { describe, expect, it } from "vitest";
import { COUNTERS, type Run } from "@volley/contracts";
import { IntervalRecorder, summarizeRun } from "@volley/metrics";
import { formatRunSummary } from "./format";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

describe("the run summary the CLI prints", () => {
  it("shows a flow's setup steps, events and unmatched samples", () => {
    const r = new IntervalRecorder();
    r.recordMicros("setup.login", 120_000);
    r.increment("errors.setup.login", 1);
    r.increment(COUNTERS.sent, 5);
    r.increment(COUNTERS.received, 5);
    r.increment("events.message", 5);
    r.increment("events.presence", 2);
    r.increment("unmatched.presence", 2);
    r.increment(COUNTERS.unmatched, 2);
    const frame = { index: 0, startedAt: 0, durationMs: 1000, warmup: false, ...r.take(), health, samples: [{ event: "presence", data: '{"user":"ann"}' }] };
    const summary = summarizeRun([frame], []);
    const run = { id: "run_1", name: "chat", status: "passed", reason: null, summary, createdAt: new Date(0).toISOString(), startedAt: new Date(0).toISOString(), endedAt: new Date(1000).toISOString() } as unknown as Run;
    const text = formatRunSummary(run, "http://localhost:3000/runs/run_1");
    expect(text).toMatch(/setup +login: 1 done · 1 failed · p95 1\d\d/);
    expect(text).toContain("events     message 5 · presence 2 (2 unmatched)");
    expect(text).toContain('unmatched  presence: {"user":"ann"}');
  });
});
