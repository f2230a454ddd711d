import { describe, expect, it } from "vitest";
import type { Run, SweepStep } from "@volley/contracts";
import { defaultPercentile, findKnee, linesOnScale, referenceLines, sweepCurves, valueAt } from "./sweep-curves";

describe("findKnee", () => {
  it("finds where a flat latency curve turns up", () => {
    const pts = [1000, 2000, 3000, 4000, 5000, 6000, 7000].map((x, i) => ({ x, y: [5, 5.2, 5.5, 6, 9, 40, 180][i]! }));
    expect(findKnee(pts)).toBe(4); // 5000/s: the last point before latency explodes
  });

  it("has no knee when latency stays flat, falls, or there are too few points", () => {
    expect(findKnee([1, 2, 3, 4].map((x) => ({ x, y: 5 })))).toBeNull();
    expect(findKnee([1, 2, 3, 4].map((x) => ({ x, y: 10 - x })))).toBeNull();
    expect(
      findKnee([
        { x: 1, y: 1 },
        { x: 2, y: 9 },
      ]),
    ).toBeNull();
    // A straight rise has no bend either.
    expect(findKnee([1, 2, 3, 4, 5].map((x) => ({ x, y: 2 * x })))).toBeNull();
  });

  it("skips steps without latency", () => {
    expect(
      findKnee([
        { x: 1, y: 5 },
        { x: 2, y: null },
        { x: 3, y: 5.5 },
        { x: 4, y: 6 },
        { x: 5, y: 100 },
      ]),
    ).toBe(3);
  });
});

describe("valueAt", () => {
  it("interpolates between steps and is null outside the measured range", () => {
    const pts = [
      { x: 100, y: 10 },
      { x: 200, y: 30 },
      { x: 300, y: null },
      { x: 400, y: 50 },
    ];
    expect(valueAt(pts, 150)).toBe(20);
    expect(valueAt(pts, 300)).toBe(40);
    expect(valueAt(pts, 50)).toBeNull();
    expect(valueAt(pts, 401)).toBeNull();
  });
});

/** A finished sweep run as the API serves it: steps with rising latency, a stop rule and its capacity. */
function sweepRun(stopWhen: Record<string, string> | undefined, capacityStep: number | null): Run {
  const steps: SweepStep[] = [1000, 2000, 3000, 4000, 5000, 5500, 6000].map((rate, index) => {
    const p95 = [5, 5.2, 5.5, 6, 9, 150, 900][index]!;
    const latency = { count: 100, min: 1, mean: p95 / 2, p50: p95 / 2, p90: p95 * 0.9, p95, p99: p95 * 2, max: p95 * 3 };
    return {
      index,
      plannedRate: rate,
      per: "aggregate",
      startedAt: 0,
      seconds: 3,
      sent: rate * 3,
      received: rate * 3,
      lost: 0,
      errors: 0,
      disconnects: 0,
      sendRate: rate,
      receiveRate: rate,
      deliveryRate: 0,
      latency,
      delivery: { ...latency, count: 0 },
      saturated: false,
      failed: index === 6,
      aborted: false,
      reason: index === 6 ? "p95 900ms > 200ms" : null,
    };
  });
  return {
    id: "r1",
    name: "sweep",
    status: "passed",
    plan: { connections: { count: 100 }, sweep: stopWhen ? { stopWhen } : {} },
    summary: {
      steps,
      ...(capacityStep === null
        ? {}
        : { capacity: { slo: "p95 <= 200ms", rate: steps[capacityStep]!.plannedRate, per: "aggregate", sendRate: 0, deliveryRate: 0, step: capacityStep } }),
    },
  } as unknown as Run;
}

describe("sweepCurves: one marked point, the same as the headline", () => {
  it("with a stop rule, the ringed point is the capacity step, and no knee is drawn beside it", () => {
    // Shape alone puts the knee at 5,000/s; the stop rule p95 <= 200 ms holds up to 5,500/s.
    expect(findKnee(sweepRun(undefined, null).summary!.steps!.map((s) => ({ x: s.sendRate, y: s.latency.p95 })))).toBe(4);
    const [curve] = sweepCurves([sweepRun({ p95: "200ms" }, 5)], "sent", "p95");
    expect(curve!.capacity).toBe(5);
    expect(curve!.points[curve!.capacity!]!.x).toBe(5500);
    expect(curve!.knee).toBeNull();
  });

  it("without a stop rule, the knee is the marked point (and there is no capacity)", () => {
    const [curve] = sweepCurves([sweepRun(undefined, null)], "sent", "p95");
    expect(curve!.capacity).toBeNull();
    expect(curve!.knee).toBe(4);
  });
});

describe("the stop rule on the chart", () => {
  it("draws the rule's own limit for the percentile shown, not a fixed 200 ms", () => {
    const p99 = sweepRun({ p99: "1s" }, 5);
    expect(referenceLines([p99], "p99")).toEqual([{ ms: 1000, label: "stop rule: p99 ≤ 1000 ms" }]);
    // A percentile the rule does not judge gets no line.
    expect(referenceLines([p99], "p95")).toEqual([]);
    expect(referenceLines([sweepRun(undefined, null)], "p95")).toEqual([]);
    expect(referenceLines([sweepRun({ max: "5s", p95: "200ms" }, 5)], "max")).toEqual([{ ms: 5000, label: "stop rule: max ≤ 5000 ms" }]);
  });

  it("names a limit far above every step instead of flattening the curve under it; a log scale draws it", () => {
    const run = sweepRun({ p95: "200ms" }, 4);
    const lines = referenceLines([run], "p95");
    const [curve] = sweepCurves([run], "sent", "p95");
    // The whole sweep climbs to 900 ms: its 200 ms rule is on the chart, as judged.
    expect(linesOnScale(lines, [curve!], false)).toEqual({ drawn: lines, above: [], highest: 900 });
    // Steps that top out at 9 ms: 200 ms would squash them onto the axis, so it is named instead.
    const low = { ...curve!, points: curve!.points.slice(0, 5) };
    expect(linesOnScale(lines, [low], false)).toEqual({ drawn: [], above: lines, highest: 9 });
    expect(linesOnScale(lines, [low], true)).toEqual({ drawn: lines, above: [], highest: 9 });
    expect(linesOnScale(lines, [], false)).toEqual({ drawn: lines, above: [], highest: null });
  });

  it("shows first the percentile the stop rule judges", () => {
    expect(defaultPercentile([sweepRun({ p99: "1s" }, 5)])).toBe("p99");
    expect(defaultPercentile([sweepRun({ max: "5s", p95: "200ms" }, 5)])).toBe("p95");
    expect(defaultPercentile([sweepRun({ max: "5s" }, 5)])).toBe("max");
    expect(defaultPercentile([sweepRun(undefined, null)])).toBe("p95");
  });
});
