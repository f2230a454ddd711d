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

export function decodeHistogram(base64: string): Histogram {
  return hdr.decodeFromCompressedBase64(base64, 64, false);
}

/** Merges encoded histograms exactly (HdrHistogram add), into a fresh 64-bit histogram. */
export function mergeEncoded(encoded: Iterable<string>): Histogram {
  const total = createHistogram(64);
  for (const b64 of encoded) total.add(decodeHistogram(b64));
  return total;
}
