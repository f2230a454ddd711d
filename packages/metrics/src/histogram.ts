import { inflateSync } from "node:zlib";
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

/** The cookie of HdrHistogram's compressed V2 encoding (word-size nibble masked out), and its header length. */
const V2_COMPRESSED_COOKIE = 0x1c849304;
const V2_HEADER_BYTES = 40;

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
 * Merged totals are always 64-bit (createHistogram(64) + addHistogram). Inflated under a hard cap
 * and only for a layout no larger than Volley's (see inflatePayload): an encoding is agent input.
 */
export function decodeHistogram(base64: string): Histogram {
  const payload = inflatePayload(base64);
  const header = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const digits = header.getInt32(12);
  const lowest = Number(header.getBigInt64(16));
  const highest = Number(header.getBigInt64(24));
  // The counts array the library would allocate grows with these: none may exceed Volley's own layout.
  if (
    !(
      digits >= 1 &&
      digits <= HISTOGRAM_CONFIG.numberOfSignificantValueDigits &&
      lowest >= 1 &&
      highest >= 2 * lowest &&
      highest <= HISTOGRAM_CONFIG.highestTrackableValue
    )
  )
    throw new HistogramDecodeError(`its layout (${digits} significant digits, ${lowest} to ${highest}) is not one Volley records`);
  // The library's own decoder of an inflated payload (what decodeFromCompressedBase64 calls after its uncapped inflate).
  return (hdr.JsHistogram as unknown as { decode(data: Uint8Array, bits: 32, minBar: number): Histogram }).decode(payload, 32, 0);
}

/** An encoded histogram that cannot be read: malformed, too large, or compressed beyond the cap. */
export class HistogramDecodeError extends Error {
  constructor(reason: string) {
    super(`encoded histogram refused: ${reason}`);
    this.name = "HistogramDecodeError";
  }
}

/** Counts in Volley's histogram layout (1 µs to 1 h at 3 digits: ~22,500). */
const COUNTS_LENGTH = (createHistogram(32) as unknown as { countsArrayLength: number }).countsArrayLength;
/**
 * The most a V2 payload of Volley's layout can inflate to: its header and one count of at most 9
 * bytes per bucket. Inflation stops there: a 7 MB "histogram" that inflates to 5 GB costs a few
 * hundred kB and a fraction of a millisecond, not the hub's event loop for 20 s.
 */
export const MAX_HISTOGRAM_PAYLOAD_BYTES = V2_HEADER_BYTES + COUNTS_LENGTH * 9;
/** The longest an encoded histogram may be: its envelope and a payload that deflate did not shrink at all. */
export const MAX_ENCODED_HISTOGRAM_CHARS = Math.ceil(((MAX_HISTOGRAM_PAYLOAD_BYTES + 1_024) * 4) / 3);

/** The V2 payload inside an encoded histogram, inflated under MAX_HISTOGRAM_PAYLOAD_BYTES; throws HistogramDecodeError. */
function inflatePayload(base64: string): Buffer {
  if (base64.length > MAX_ENCODED_HISTOGRAM_CHARS)
    throw new HistogramDecodeError(`${base64.length} characters, over the ${MAX_ENCODED_HISTOGRAM_CHARS} any histogram needs`);
  const raw = Buffer.from(base64, "base64");
  if (raw.byteLength < 8) throw new HistogramDecodeError("shorter than its envelope");
  const envelope = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if ((envelope.getInt32(0) & ~0xf0) !== V2_COMPRESSED_COOKIE) throw new HistogramDecodeError("not HdrHistogram's compressed V2 encoding");
  const length = envelope.getInt32(4);
  if (length <= 0 || length > raw.byteLength - 8) throw new HistogramDecodeError(`its envelope claims ${length} compressed bytes of ${raw.byteLength - 8}`);
  let payload: Buffer;
  try {
    payload = inflateSync(raw.subarray(8, 8 + length), { maxOutputLength: MAX_HISTOGRAM_PAYLOAD_BYTES });
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new HistogramDecodeError(
      code === "ERR_BUFFER_TOO_LARGE" ? `it inflates past ${MAX_HISTOGRAM_PAYLOAD_BYTES} bytes` : `it does not inflate (${(e as Error).message})`,
    );
  }
  if (payload.byteLength < V2_HEADER_BYTES) throw new HistogramDecodeError("its payload is shorter than a header");
  return payload;
}

/**
 * Why an encoded histogram from an agent cannot be stored (null: it can): inflated under the cap,
 * its layout checked, and every count walked within the layout's range, as addEncoded will walk it.
 * What the hub asks of every histogram in a frame before the frame is stored.
 */
export function encodedHistogramError(base64: string): string | null {
  try {
    // One scratch histogram, emptied each time: the hub checks every histogram of every frame, and a
    // fresh one allocates a ~22,500-count array per check.
    validation.h ??= createHistogram(64);
    validation.h.reset();
    addEncoded(validation.h, base64);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

const validation: { h?: Histogram } = {};

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

/**
 * The histogram's mean, the same number as HdrHistogram's `mean` to the last bit (each non-empty
 * bucket's median equivalent value times its count, summed in bucket order), without its recorded-
 * values iterator: that allocates and steps an object per bucket, and the hub's run meter takes
 * means of hundreds of merged histograms (per agent, per step) every few seconds.
 */
export function histogramMean(h: Histogram): number {
  if (h.totalCount === 0) return 0;
  const t = h as unknown as CountsAccess & { subBucketHalfCount: number };
  const last = Math.min(t.countsArrayLength - 1, t.countsArrayIndex(h.maxValue));
  const half = t.subBucketHalfCount;
  const unit = 2 ** t.unitMagnitude;
  let total = 0;
  for (let i = 0; i <= last; i++) {
    const c = t.getCountAtIndex(i);
    if (c === 0) continue;
    // valueFromIndex and medianEquivalentValue, inlined: bucket b (the lower half of bucket 0 is
    // its own), the value at its sub-bucket, plus half the bucket's equivalent range (2^b units).
    let b = Math.floor(i / half) - 1;
    let sub = (i % half) + half;
    if (b < 0) {
      sub -= half;
      b = 0;
    }
    const range = 2 ** b * unit;
    total += (sub * range + Math.floor(range / 2)) * c;
  }
  return total / h.totalCount;
}

/**
 * `addHistogram(target, decodeHistogram(base64))` without building the decoded histogram: the
 * counts are added straight from the encoded payload. Decoding allocates a ~22,000-entry counts
 * array per histogram (1 µs to 1 h at 3 digits), which dominated the hub's live merge and the
 * final summary (hundreds of decodes a second). Same result to the last count, min and max (the
 * decoded histogram's max is its top bucket's highest equivalent value, its min the lowest
 * non-zero bucket's value); an encoding of any other configuration takes the decoding path.
 */
export function addEncoded(target: Histogram | readonly Histogram[], base64: string): void {
  const targets: readonly Histogram[] = Array.isArray(target) ? target : [target as Histogram];
  if (targets.length === 0) return;
  type Access = CountsAccess & {
    unitMagnitude: number;
    highestTrackableValue: number;
    lowestDiscernibleValue: number;
    valueFromIndex(i: number): number;
    highestEquivalentValue(v: number): number;
  };
  const configured = (h: Histogram) => {
    const t = h as unknown as Access;
    return (
      t.unitMagnitude === 0 &&
      t.lowestDiscernibleValue === HISTOGRAM_CONFIG.lowestDiscernibleValue &&
      t.highestTrackableValue === HISTOGRAM_CONFIG.highestTrackableValue &&
      h.numberOfSignificantValueDigits === HISTOGRAM_CONFIG.numberOfSignificantValueDigits
    );
  };
  const payload = targets.every(configured) ? inflatePayload(base64) : null;
  const header = payload ? new DataView(payload.buffer, payload.byteOffset, payload.byteLength) : null;
  if (
    !payload ||
    !header ||
    payload.byteLength < V2_HEADER_BYTES ||
    header.getInt32(12) !== HISTOGRAM_CONFIG.numberOfSignificantValueDigits ||
    Number(header.getBigInt64(16)) !== HISTOGRAM_CONFIG.lowestDiscernibleValue ||
    Number(header.getBigInt64(24)) !== HISTOGRAM_CONFIG.highestTrackableValue
  ) {
    const decoded = decodeHistogram(base64);
    for (const h of targets) addHistogram(h, decoded);
    return;
  }
  // Decoded once, added to every target (the hub's run meter adds one frame's histogram to several merges).
  const first = targets[0] as unknown as Access;
  const cursor = { bytes: payload, at: V2_HEADER_BYTES };
  const end = V2_HEADER_BYTES + header.getInt32(4);
  if (scratch.indexes.length < first.countsArrayLength) {
    scratch.indexes = new Int32Array(first.countsArrayLength);
    scratch.counts = new Float64Array(first.countsArrayLength);
  }
  const { indexes, counts } = scratch;
  let n = 0;
  let index = 0;
  let added = 0;
  let maxIndex = -1;
  let minNonZeroIndex = -1;
  if (end > payload.byteLength)
    throw new HistogramDecodeError(`its header claims ${end - V2_HEADER_BYTES} bytes of counts, the payload has ${payload.byteLength - V2_HEADER_BYTES}`);
  while (cursor.at < end) {
    const count = readZigZag(cursor);
    if (count < 0) {
      index -= count; // a run of empty buckets
      continue;
    }
    if (count > 0) {
      if (index >= first.countsArrayLength) throw new HistogramDecodeError(`it has a count at index ${index}, past the configured range`);
      indexes[n] = index;
      counts[n++] = count;
      added += count;
      maxIndex = index;
      if (minNonZeroIndex === -1 && index !== 0) minNonZeroIndex = index;
    }
    index++;
  }
  if (added === 0) return;
  const max = first.highestEquivalentValue(first.valueFromIndex(maxIndex));
  const min = minNonZeroIndex >= 0 ? first.valueFromIndex(minNonZeroIndex) : Number.MAX_VALUE;
  for (const h of targets) {
    const t = h as unknown as Access;
    for (let i = 0; i < n; i++) t.addToCountAtIndex(indexes[i]!, counts[i]!);
    t.setTotalCount(h.totalCount + added);
    t.updatedMaxValue(Math.max(h.maxValue, max));
    t.updateMinNonZeroValue(Math.min(h.minNonZeroValue, min));
  }
}

/** The non-empty buckets of the payload being added (reused: addEncoded runs hundreds of times a second and never re-enters). */
const scratch = { indexes: new Int32Array(0), counts: new Float64Array(0) };

/**
 * One count of the V2 payload: LEB128 ZigZag, at most 9 bytes, negative = a run of empty buckets.
 * Read exactly as hdr-histogram-js's ZigZagEncoding.decode reads it (including its 9th byte), so
 * both paths agree on every count.
 */
function readZigZag(c: { bytes: Uint8Array; at: number }): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 9; i++) {
    const v = c.bytes[c.at++]!;
    value += (v & 0x7f) * scale;
    if ((v & 0x80) === 0) break;
    scale *= 128;
  }
  return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
}

/** Merges encoded histograms exactly, into a fresh 64-bit histogram. */
export function mergeEncoded(encoded: Iterable<string>): Histogram {
  const total = createHistogram(64);
  for (const b64 of encoded) addEncoded(total, b64);
  return total;
}
