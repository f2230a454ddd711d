import { describe, expect, it } from "vitest";
import { HoldStats } from "./hold-stats";

describe("hold stats", () => {
  it("reads percentiles to 10 µs below 100 ms, keeps min and max exact, and resets", () => {
    const s = new HoldStats();
    expect(s.summary()).toEqual({ count: 0, minMs: 0, meanMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, maxMs: 0 });
    // 100 holds of 25.000–25.099 ms (1 µs apart), then one 2.5 s stall.
    for (let i = 0; i < 100; i++) s.record(25_000 + i);
    s.record(2_500_000);
    const h = s.summary();
    expect(h.count).toBe(101);
    expect(h.minMs).toBe(25);
    expect(h.p50Ms).toBe(25.06); // the 51st hold, 25.050 ms, read at its bucket's upper edge
    expect(h.p90Ms).toBe(25.1);
    expect(h.p99Ms).toBe(25.1);
    expect(h.maxMs).toBe(2500);
    expect(h.meanMs).toBeCloseTo((100 * 25.0495 + 2500) / 101, 2);
    s.reset();
    s.record(-3); // a clock read a hair before the arrival counts as no hold at all
    expect(s.summary()).toMatchObject({ count: 1, minMs: 0, maxMs: 0, p99Ms: 0 });
  });

  it("puts holds past 100 ms in 1 ms buckets, never reported above the max", () => {
    const s = new HoldStats();
    s.record(150_400);
    expect(s.summary()).toMatchObject({ p50Ms: 150.4, maxMs: 150.4 });
    s.record(150_100);
    s.record(170_000);
    expect(s.summary().p50Ms).toBe(151);
  });

  it("lists every non-empty bucket, fine then coarse, with counts that sum to the count", () => {
    const s = new HoldStats();
    expect(s.buckets()).toEqual([]);
    for (const us of [25_003, 25_007, 25_012, 150_400]) s.record(us);
    expect(s.buckets()).toEqual([
      [25_000, 25_010, 2],
      [25_010, 25_020, 1],
      [150_000, 151_000, 1],
    ]);
  });
});
