import { describe, expect, it } from "vitest";
import { addHistogram, createHistogram, decodeHistogram, encodeHistogram, mergeEncoded, recordMicros } from "./histogram";

/** Deterministic pseudo-random values (xorshift), so a failure reproduces. */
function values(seed: number, n: number, scale: number): number[] {
  let x = seed;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.push(Math.floor(((x >>> 0) / 2 ** 32) ** 3 * scale));
  }
  return out;
}

describe("addHistogram", () => {
  it("merges exactly: every percentile, count, min and max equal the union's and the library's add", () => {
    const shards = [values(1, 5000, 40_000), values(2, 3000, 2_000_000), values(3, 1, 7), values(4, 800, 3_600_000_000)];
    const union = createHistogram(64);
    const library = createHistogram(64);
    const fast = createHistogram(64);
    for (const shard of shards) {
      const h = createHistogram(32);
      for (const v of shard) {
        recordMicros(h, v);
        recordMicros(union, v);
      }
      const decoded = decodeHistogram(encodeHistogram(h));
      library.add(decodeHistogram(encodeHistogram(h)));
      addHistogram(fast, decoded);
    }
    expect(mergeEncoded([]).totalCount).toBe(0);
    expect(fast.totalCount).toBe(union.totalCount);
    // A decoded histogram knows its max only to the bucket's resolution: compare with the library's merge.
    expect(fast.maxValue).toBe(library.maxValue);
    expect(fast.minNonZeroValue).toBe(library.minNonZeroValue);
    for (const p of [0, 1, 10, 50, 90, 95, 99, 99.9, 99.99, 100]) {
      expect(fast.getValueAtPercentile(p)).toBe(union.getValueAtPercentile(p));
      expect(fast.getValueAtPercentile(p)).toBe(library.getValueAtPercentile(p));
    }
  });

  it("leaves the target alone when the other is empty", () => {
    const t = createHistogram(64);
    recordMicros(t, 100);
    addHistogram(t, createHistogram(32));
    expect(t.totalCount).toBe(1);
    expect(t.maxValue).toBe(100);
  });
});
