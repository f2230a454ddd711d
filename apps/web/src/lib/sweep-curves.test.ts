import { describe, expect, it } from "vitest";
import { findKnee, valueAt } from "./sweep-curves";

describe("findKnee", () => {
  it("finds where a flat latency curve turns up", () => {
    const pts = [1000, 2000, 3000, 4000, 5000, 6000, 7000].map((x, i) => ({ x, y: [5, 5.2, 5.5, 6, 9, 40, 180][i]! }));
    expect(findKnee(pts)).toBe(4); // 5000/s: the last point before latency explodes
  });

  it("has no knee when latency stays flat, falls, or there are too few points", () => {
    expect(findKnee([1, 2, 3, 4].map((x) => ({ x, y: 5 })))).toBeNull();
    expect(findKnee([1, 2, 3, 4].map((x) => ({ x, y: 10 - x })))).toBeNull();
    expect(findKnee([{ x: 1, y: 1 }, { x: 2, y: 9 }])).toBeNull();
    // A straight rise has no bend either.
    expect(findKnee([1, 2, 3, 4, 5].map((x) => ({ x, y: 2 * x })))).toBeNull();
  });

  it("skips steps without latency", () => {
    expect(findKnee([{ x: 1, y: 5 }, { x: 2, y: null }, { x: 3, y: 5.5 }, { x: 4, y: 6 }, { x: 5, y: 100 }])).toBe(3);
  });
});

describe("valueAt", () => {
  it("interpolates between steps and is null outside the measured range", () => {
    const pts = [{ x: 100, y: 10 }, { x: 200, y: 30 }, { x: 300, y: null }, { x: 400, y: 50 }];
    expect(valueAt(pts, 150)).toBe(20);
    expect(valueAt(pts, 300)).toBe(40);
    expect(valueAt(pts, 50)).toBeNull();
    expect(valueAt(pts, 401)).toBeNull();
  });
});
