import { describe, expect, it } from "vitest";
import * as hdr from "hdr-histogram-js";
import { deflateSync } from "node:zlib";
import {
  addEncoded,
  addHistogram,
  createHistogram,
  decodeHistogram,
  encodedHistogramError,
  encodeHistogram,
  HistogramDecodeError,
  histogramMean,
  MAX_ENCODED_HISTOGRAM_CHARS,
  MAX_HISTOGRAM_PAYLOAD_BYTES,
  mergeEncoded,
  recordMicros,
} from "./histogram";

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

  it("addEncoded adds straight from the encoding with the same counts, total, min and max as decode + add", () => {
    const shards = [values(5, 4000, 30_000), values(6, 2500, 5_000_000), [0, 0, 3], values(7, 600, 3_600_000_000), [], [0]];
    const viaDecode = createHistogram(64);
    const direct = createHistogram(64);
    for (const shard of shards) {
      const h = createHistogram(32);
      for (const v of shard) recordMicros(h, v);
      const encoded = encodeHistogram(h);
      addHistogram(viaDecode, decodeHistogram(encoded));
      addEncoded(direct, encoded);
      expect(direct.totalCount).toBe(viaDecode.totalCount);
      expect(direct.maxValue).toBe(viaDecode.maxValue);
      expect(direct.minNonZeroValue).toBe(viaDecode.minNonZeroValue);
    }
    const counts = (h: object) => {
      const c = h as { countsArrayLength: number; getCountAtIndex(i: number): number };
      return Array.from({ length: c.countsArrayLength }, (_, i) => c.getCountAtIndex(i));
    };
    expect(counts(direct)).toEqual(counts(viaDecode));
    for (const p of [0, 1, 50, 99, 99.99, 100]) expect(direct.getValueAtPercentile(p)).toBe(viaDecode.getValueAtPercentile(p));
    // Another configuration is still merged, through the decoding path.
    const coarse = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 1_000_000, numberOfSignificantValueDigits: 2 });
    coarse.recordValue(12_345);
    const before = direct.totalCount;
    addEncoded(direct, hdr.encodeIntoCompressedBase64(coarse));
    expect(direct.totalCount).toBe(before + 1);
  });

  it("leaves the target alone when the other is empty", () => {
    const t = createHistogram(64);
    recordMicros(t, 100);
    addHistogram(t, createHistogram(32));
    expect(t.totalCount).toBe(1);
    expect(t.maxValue).toBe(100);
  });
});

describe("histogramMean", () => {
  it("is HdrHistogram's mean to the last bit, on recorded, decoded and merged histograms", () => {
    const spreads = [
      () => 1 + Math.floor(Math.random() * 50),
      () => 800 + Math.floor(Math.random() ** 3 * 40_000),
      () => Math.floor(Math.random() ** 6 * 3_000_000_000),
    ];
    for (const spread of spreads) {
      const h = createHistogram(64);
      for (let i = 0; i < 5000; i++) recordMicros(h, spread());
      expect(histogramMean(h)).toBe(h.mean);
      const decoded = decodeHistogram(encodeHistogram(h));
      expect(histogramMean(decoded)).toBe(decoded.mean);
      const merged = createHistogram(64);
      addEncoded(merged, encodeHistogram(h));
      addEncoded(merged, encodeHistogram(decoded));
      expect(histogramMean(merged)).toBe(merged.mean);
    }
  });

  it("is 0 for an empty histogram, as the library's is", () => {
    expect(histogramMean(createHistogram())).toBe(0);
  });
});

describe("encoded histograms from agents are agent input", () => {
  /** An encoded "histogram" whose compressed payload is `inner`, in HdrHistogram's V2 envelope. */
  const envelope = (inner: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeInt32BE(0x1c849314, 0);
    head.writeInt32BE(inner.byteLength, 4);
    return Buffer.concat([head, inner]).toString("base64");
  };
  // 64 MB of zeros deflate to ~64 kB (the 7 MB inflated to ~5 GB and blocked the hub's loop 20-30 s).
  const bomb = envelope(deflateSync(Buffer.alloc(64 * 1024 * 1024)));

  it("a decompression bomb is refused after inflating no more than a histogram can need", () => {
    expect(encodedHistogramError(bomb)).toMatch(/inflates past \d+ bytes/);
    expect(() => decodeHistogram(bomb)).toThrow(HistogramDecodeError);
    expect(() => addEncoded(createHistogram(64), bomb)).toThrow(/inflates past/);
    expect(MAX_HISTOGRAM_PAYLOAD_BYTES).toBeLessThan(512 * 1024);
  });

  it("names what is wrong with malformed encodings, and passes real ones", () => {
    const h = createHistogram();
    for (let v = 1; v < 5_000_000; v *= 3) recordMicros(h, v);
    expect(encodedHistogramError(encodeHistogram(h))).toBeNull();
    expect(encodedHistogramError("not base64 at all")).toMatch(/not HdrHistogram|shorter/);
    expect(encodedHistogramError("x".repeat(MAX_ENCODED_HISTOGRAM_CHARS + 1))).toMatch(/characters, over/);
    expect(encodedHistogramError(envelope(deflateSync(Buffer.alloc(10))))).toMatch(/shorter than a header/);
    // A header claiming more counts than its payload holds.
    const payload = Buffer.alloc(48);
    payload.writeInt32BE(0x1c849303, 0);
    payload.writeInt32BE(1_000, 4);
    payload.writeInt32BE(3, 12);
    payload.writeBigInt64BE(1n, 16);
    payload.writeBigInt64BE(3_600_000_000n, 24);
    expect(encodedHistogramError(envelope(deflateSync(payload)))).toMatch(/claims 1000 bytes of counts/);
    // A layout far larger than Volley's would make the decoder allocate without bound.
    payload.writeInt32BE(5, 12);
    expect(() => decodeHistogram(envelope(deflateSync(payload)))).toThrow(/not one Volley records/);
  });
});
