import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { createHistogram, encodeHistogram, recordMicros } from "@volley/metrics";
import { StepJudge, SweepPlan } from "./sweep-plan";

const S = 1_000_000;
const plan = (sweep: PlanInput["sweep"], duration = "20s") =>
  planSchema.parse({
    name: "p",
    target: { url: "ws://127.0.0.1:9/echo" },
    connections: { count: 1 },
    scenario: { kind: "echo", message: { rate: 5 }, duration },
    sweep,
  } satisfies PlanInput);

describe("sweep plan", () => {
  it("plans only the steps whose whole hold fits in scenario.duration, from message.rate by default", () => {
    // Holds at 0-3, 4-7, 8-11 s: a fourth would end at 15 s, past 13 s.
    const q = plan({ step: 5, hold: "3s", gap: "1s" }, "13s");
    expect(new SweepPlan(q).rates).toEqual([5, 10, 15]);
    const p = plan({ from: 1, step: 2, until: 6, hold: "2s", gap: "1s" });
    expect(new SweepPlan(p).rates).toEqual([1, 3, 5]);
  });

  it("begins on the next whole second and places holds and gaps from there", () => {
    const p = plan({ step: 1, steps: 3, hold: "2s", gap: "1s" });
    const sw = new SweepPlan(p);
    expect(sw.stepAt(0)).toBe(-1);
    sw.begin(0.3 * S);
    expect([sw.holdStart(0), sw.holdEnd(0), sw.holdStart(1), sw.holdStart(2)]).toEqual([1 * S, 3 * S, 4 * S, 7 * S]);
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((s) => sw.stepAt(s * S))).toEqual([-1, 0, 0, -1, 1, 1, -1, 2, 2, -1]);
  });
});

describe("step judge", () => {
  const body = (latenciesMs: number[], sent: number) => {
    const h = createHistogram();
    for (const ms of latenciesMs) recordMicros(h, ms * 1000);
    return { counters: { [COUNTERS.sent]: sent }, histograms: { [HISTOGRAMS.messageLatency]: encodeHistogram(h) } };
  };

  it("judges the step's own frames against stopWhen", () => {
    const p = plan({ step: 1, stopWhen: { p95: "200ms" } });
    const ok = new StepJudge(p);
    ok.add(body([10, 20, 30], 3));
    expect(ok.verdict([])).toBeNull();
    const slow = new StepJudge(p);
    slow.add(body([10], 1));
    slow.add(body([300, 400], 2));
    expect(slow.verdict([])).toMatch(/^p95 \d+(\.\d+)?ms > 200ms$/);
  });

  it("counts replies still awaited at their age so far, so a stall at the end of a hold is not missed", () => {
    const judge = new StepJudge(plan({ step: 1, stopWhen: { p50: "100ms" } }));
    judge.add(body([5, 5], 6));
    expect(judge.roundTrip).toBe(true);
    // Four of six messages unanswered for 500 ms: at least that slow, whatever comes later.
    expect(judge.verdict([500_000, 500_000, 500_000, 500_000])).toMatch(/^p50 /);
  });
});
