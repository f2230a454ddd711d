import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type Run } from "@volley/contracts";
import { IntervalRecorder, RunTally, summarizeRun } from "@volley/metrics";
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
    const run = {
      id: "run_1",
      name: "chat",
      status: "passed",
      reason: null,
      summary,
      createdAt: new Date(0).toISOString(),
      startedAt: new Date(0).toISOString(),
      endedAt: new Date(1000).toISOString(),
    } as unknown as Run;
    const text = formatRunSummary(run, "http://localhost:3000/runs/run_1");
    expect(text).toMatch(/setup +login: 1 done · 1 failed · p95 1\d\d/);
    expect(text).toContain("events     message 5 · presence 2 (2 unmatched)");
    expect(text).toContain('unmatched  presence: {"user":"ann"}');
  });

  it("marks a sweep step the agent limited, says why, and gives the capacity as a lower bound", () => {
    const plan = planSchema.parse({
      name: "sweep",
      target: { url: "ws://127.0.0.1:9/echo" },
      connections: { count: 2 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "20s" },
      sweep: { from: 20, step: 20, steps: 3, hold: "1s", gap: "1s", stopWhen: { p99: "10s" } },
    });
    const frame = (index: number, step: number, limited?: string) => {
      const r = new IntervalRecorder();
      r.increment(COUNTERS.sent, 20 * (step + 1));
      r.increment(COUNTERS.received, 20 * (step + 1));
      r.recordMicros(HISTOGRAMS.messageLatency, 2000);
      const saturated = limited !== undefined;
      return {
        index,
        startedAt: index * 1000,
        durationMs: 1000,
        warmup: false,
        ...r.take(),
        health: { ...health, saturated },
        step: { index: step, rate: 20 * (step + 1), per: "aggregate" as const, ...(limited ? { generatorLimited: limited } : {}) },
      };
    };
    const why = "the agent was saturated in 1 of 1 s: event-loop delay max 412 ms > 250 ms";
    const summary = summarizeRun([frame(1, 0), frame(3, 1, why)], [], plan);
    const run = {
      id: "run_2",
      name: "sweep",
      status: "passed",
      reason: null,
      summary,
      createdAt: new Date(0).toISOString(),
      startedAt: new Date(0).toISOString(),
      endedAt: new Date(1000).toISOString(),
    } as unknown as Run;
    const text = formatRunSummary(run, "http://localhost:3000/runs/run_2");
    expect(text).toContain("capacity   p99 <= 10000ms: ≥ 20/s per aggregate (step 0, 20 sent/s)\n");
    expect(text).toContain(`warning    the step at 40/s per aggregate was limited by the load generator, not the server (${why}); that step decides nothing`);
    expect(text).toContain(`step 1     agent-limited, not judged: ${why}`);

    // Limited from its first step: nothing found either way, not "a lower bound" of nothing.
    const none = formatRunSummary({ ...run, status: "inconclusive", summary: summarizeRun([frame(1, 0, why)], [], plan) }, "http://localhost:3000/runs/run_2");
    expect(none).toContain("capacity   p99 <= 10000ms: not found — no step could be judged: the agent was the bottleneck from the first step\n");
    expect(none).toContain(`warning    the step at 20/s per aggregate was limited by the load generator, not the server (${why}); add agents and rerun`);
    expect(none).not.toContain("lower bound");
  });

  it("shows deliveries with copies to late joiners apart from duplicates", () => {
    const r = new IntervalRecorder();
    r.increment(COUNTERS.sent, 10);
    r.increment(COUNTERS.deliveriesExpected, 20);
    r.increment(COUNTERS.deliveriesReceived, 20);
    r.increment(COUNTERS.deliveriesLateJoiner, 3);
    const summary = summarizeRun([{ index: 0, startedAt: 0, durationMs: 1000, warmup: false, ...r.take(), health }], []);
    expect(summary.deliveries).toMatchObject({ expected: 20, received: 20, duplicated: 0, lateJoiner: 3 });
    const run = {
      id: "run_3",
      name: "room",
      status: "passed",
      reason: null,
      summary,
      createdAt: new Date(0).toISOString(),
      startedAt: new Date(0).toISOString(),
      endedAt: new Date(1000).toISOString(),
    } as unknown as Run;
    expect(formatRunSummary(run, "http://x/runs/run_3")).toContain(
      "deliveries due 20 · received 20 · lost 0 · duplicated 0 · to late joiners 3 (sent before they joined; not due)",
    );
  });

  it("shows a closed loop's response times as such, with what they hide, and no latency line", () => {
    const r = new IntervalRecorder();
    r.increment(COUNTERS.sent, 4);
    r.increment(COUNTERS.received, 4);
    for (const us of [20_000, 21_000, 22_000, 40_000]) r.recordMicros(HISTOGRAMS.closedLoopResponseTime, us);
    const summary = summarizeRun([{ index: 0, startedAt: 0, durationMs: 1000, warmup: false, ...r.take(), health }], []);
    const run = {
      id: "run_4",
      name: "users",
      status: "passed",
      reason: null,
      summary,
      createdAt: new Date(0).toISOString(),
      startedAt: new Date(0).toISOString(),
      endedAt: new Date(1000).toISOString(),
    } as unknown as Run;
    const text = formatRunSummary(run, "http://x/runs/run_4");
    expect(text).toMatch(/response +closed loop: p50 2\d\.\dms/);
    expect(text).toContain("not latency from an intended send time");
    expect(text).toContain("coordinated omission");
    expect(text).not.toMatch(/^ +latency /m);
  });

  it("warns of stored histograms left out of the percentiles", () => {
    const r = new IntervalRecorder();
    r.increment(COUNTERS.sent, 3);
    const tally = new RunTally();
    tally.add({ index: 4, startedAt: 0, durationMs: 1000, warmup: false, ...r.take(), histograms: { [HISTOGRAMS.messageLatency]: "damaged" }, health });
    const run = {
      id: "run_3",
      name: "left-out",
      status: "passed",
      reason: null,
      summary: tally.summary([]),
      createdAt: new Date(0).toISOString(),
    } as unknown as Run;
    expect(formatRunSummary(run, "http://localhost:3000/runs/run_3")).toContain(
      "warning    1 stored histogram could not be read and is left out of the percentiles: 1 of message.latency (interval 4).",
    );
  });
});
