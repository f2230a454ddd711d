import * as hdr from "hdr-histogram-js";

/**
 * The one histogram configuration used everywhere: microseconds, 1 µs to 1 hour, 3 significant
 * digits. Recording and merging must agree on it, or merged percentiles would not be exact.
 */
export const HISTOGRAM_CONFIG = {
  lowestDiscernibleValue: 1,
  highestTrackableValue: 3_600_000_000,
  numberOfSignificantValueDigits: 3,
} as const;

export type Histogram = hdr.Histogram;

export function createHistogram(bitBucketSize: 32 | 64 = 32): Histogram {
  return hdr.build({ ...HISTOGRAM_CONFIG, bitBucketSize, autoResize: false, useWebAssembly: false });
}

/** Records one value in microseconds, clamped into the trackable range so an outlier is kept, not thrown. */
export function recordMicros(h: Histogram, micros: number): void {
  const v = Math.min(HISTOGRAM_CONFIG.highestTrackableValue, Math.max(0, Math.round(micros)));
  h.recordValue(v);
}

export function encodeHistogram(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

/**
 * Decodes into 32-bit counts: encoded histograms are one interval of one shard (IntervalRecorder),
 * whose buckets never near 2^32, and half the allocation matters at hundreds of decodes a second.
 * Merged totals are always 64-bit (createHistogram(64) + addHistogram).
 */
export function decodeHistogram(base64: string): Histogram {
  return hdr.decodeFromCompressedBase64(base64, 32, false);
}

/** The JsHistogram internals `addHistogram` uses (present on every histogram createHistogram and decodeHistogram make). */
interface CountsAccess {
  countsArrayLength: number;
  bucketCount: number;
  subBucketCount: number;
  unitMagnitude: number;
  countsArrayIndex(value: number): number;
  getCountAtIndex(i: number): number;
  addToCountAtIndex(i: number, n: number): void;
  setTotalCount(n: number): void;
  updatedMaxValue(v: number): void;
  updateMinNonZeroValue(v: number): void;
}

/**
 * Adds `other` into `target` exactly, like HdrHistogram's add, but walks the counts only up to
 * `other`'s highest recorded value: with a 1 µs to 1 h range most of the ~22,000 counts of a
 * latency histogram are above its max, and the hub merges hundreds of histograms a second.
 */
export function addHistogram(target: Histogram, other: Histogram): void {
  const t = target as unknown as CountsAccess;
  const o = other as unknown as CountsAccess;
  if (other.totalCount === 0) return;
  if (t.bucketCount !== o.bucketCount || t.subBucketCount !== o.subBucketCount || t.unitMagnitude !== o.unitMagnitude) {
    target.add(other); // different layouts: the library's general (value by value) path
    return;
  }
  const last = Math.min(o.countsArrayLength - 1, o.countsArrayIndex(other.maxValue));
  let added = 0;
  for (let i = 0; i <= last; i++) {
    const c = o.getCountAtIndex(i);
    if (c > 0) {
      t.addToCountAtIndex(i, c);
      added += c;
    }
  }
  t.setTotalCount(target.totalCount + added);
  t.updatedMaxValue(Math.max(target.maxValue, other.maxValue));
  t.updateMinNonZeroValue(Math.min(target.minNonZeroValue, other.minNonZeroValue));
}

/** Merges encoded histograms exactly, into a fresh 64-bit histogram. */
export function mergeEncoded(encoded: Iterable<string>): Histogram {
  const total = createHistogram(64);
  for (const b64 of encoded) addHistogram(total, decodeHistogram(b64));
  return total;
}
