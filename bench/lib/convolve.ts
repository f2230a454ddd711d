import type { Histogram } from "@volley/metrics";

/** [fromUs, toUs, count] buckets, as the echo targets' GET /stats lists the holds they applied. */
export type Buckets = readonly (readonly [number, number, number])[];

const BIN_US = 10;

/**
 * Percentiles (ms) of X + Y for independent X and Y: the target's hold (its own buckets) and the
 * loopback the agent measured with no hold (an HdrHistogram, µs). Percentiles of a sum are not the
 * sums of percentiles (p99 + p99 overshoots, since both tails rarely meet in one message), so the
 * true "hold plus loopback" at p99 is read from the convolution of the two distributions, binned to
 * 10 µs. Each bucket of the hold counts at its midpoint; each HdrHistogram value at its highest
 * equivalent value, as its own percentiles are read.
 */
export function convolvedPercentilesMs(hold: Buckets, loopback: Histogram, percentiles: readonly number[]): number[] {
  const loop: [number, number][] = [];
  const it = (
    loopback as unknown as {
      recordedValuesIterator: { reset(): void; hasNext(): boolean; next(): { valueIteratedTo: number; countAddedInThisIterationStep: number } };
    }
  ).recordedValuesIterator;
  it.reset();
  while (it.hasNext()) {
    const v = it.next();
    if (v.countAddedInThisIterationStep > 0) loop.push([v.valueIteratedTo, v.countAddedInThisIterationStep]);
  }
  if (hold.length === 0 || loop.length === 0) return percentiles.map(() => NaN);
  const maxUs = hold[hold.length - 1]![1] + loop[loop.length - 1]![0];
  const bins = new Float64Array(Math.ceil(maxUs / BIN_US) + 2);
  let total = 0;
  for (const [from, to, c] of hold) {
    const mid = (from + to) / 2;
    for (const [v, d] of loop) {
      bins[Math.floor((mid + v) / BIN_US)]! += c * d;
      total += c * d;
    }
  }
  return percentiles.map((p) => {
    const rank = (p / 100) * total;
    let seen = 0;
    for (let i = 0; i < bins.length; i++) {
      seen += bins[i]!;
      if (seen >= rank) return ((i + 1) * BIN_US) / 1000;
    }
    return maxUs / 1000;
  });
}
