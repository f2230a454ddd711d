/** The distribution of holds a target actually applied, in ms (percentiles to the bucket's upper edge). */
export interface HoldSummary {
  count: number;
  /** Exact: a hold below the configured delay would mean a reply left early. */
  minMs: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** 10 µs buckets up to 100 ms: a latency test's hold is read to a hundredth of a millisecond. */
const FINE_US = 10;
const FINE_BUCKETS = 10_000;
const FINE_LIMIT_US = FINE_US * FINE_BUCKETS;
/** Then 1 ms buckets up to 100 s (stalls); anything longer counts in the last one, and max stays exact. */
const COARSE_US = 1000;
const COARSE_BUCKETS = 100_000;

/**
 * Every hold an echo target applied (from the message's arrival to the reply's send call), kept
 * as a fixed-bucket histogram: recording is an array increment, cheap enough to run on every
 * reply of every target always, so the ground truth of a latency test is measured, not assumed.
 * The buckets are allocated on the first record, so targets nobody uses cost nothing.
 */
export class HoldStats {
  private fine: Uint32Array | undefined;
  private coarse: Uint32Array | undefined;
  private count = 0;
  private sumUs = 0;
  private minUs = Infinity;
  private maxUs = 0;

  record(holdUs: number): void {
    const us = Math.max(holdUs, 0);
    this.count++;
    this.sumUs += us;
    if (us > this.maxUs) this.maxUs = us;
    if (us < this.minUs) this.minUs = us;
    if (us < FINE_LIMIT_US) {
      (this.fine ??= new Uint32Array(FINE_BUCKETS))[Math.floor(us / FINE_US)]!++;
    } else {
      const i = Math.min(COARSE_BUCKETS - 1, Math.floor((us - FINE_LIMIT_US) / COARSE_US));
      (this.coarse ??= new Uint32Array(COARSE_BUCKETS))[i]!++;
    }
  }

  summary(): HoldSummary {
    const ms = (us: number) => Math.round(us) / 1000;
    return {
      count: this.count,
      minMs: this.count ? ms(this.minUs) : 0,
      meanMs: this.count ? ms(this.sumUs / this.count) : 0,
      p50Ms: ms(this.percentileUs(50)),
      p90Ms: ms(this.percentileUs(90)),
      p99Ms: ms(this.percentileUs(99)),
      maxMs: ms(this.maxUs),
    };
  }

  /**
   * Every non-empty bucket as [fromUs, toUs, count], ascending: the whole distribution, for a bench
   * that combines it with another (hold + loopback is a convolution; percentiles do not add).
   */
  buckets(): [number, number, number][] {
    const out: [number, number, number][] = [];
    const collect = (counts: Uint32Array | undefined, base: number, width: number) => {
      if (!counts) return;
      for (let i = 0; i < counts.length; i++) if (counts[i]) out.push([base + i * width, base + (i + 1) * width, counts[i]!]);
    };
    collect(this.fine, 0, FINE_US);
    collect(this.coarse, FINE_LIMIT_US, COARSE_US);
    return out;
  }

  reset(): void {
    this.fine?.fill(0);
    this.coarse?.fill(0);
    this.count = this.sumUs = this.maxUs = 0;
    this.minUs = Infinity;
  }

  /** The upper edge of the bucket holding the p-th percentile, never above the exact max. */
  private percentileUs(p: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    if (this.fine) {
      for (let i = 0; i < FINE_BUCKETS; i++) {
        seen += this.fine[i]!;
        if (seen >= rank) return Math.min(this.maxUs, (i + 1) * FINE_US);
      }
    }
    if (this.coarse) {
      for (let i = 0; i < COARSE_BUCKETS; i++) {
        seen += this.coarse[i]!;
        if (seen >= rank) return Math.min(this.maxUs, FINE_LIMIT_US + (i + 1) * COARSE_US);
      }
    }
    return this.maxUs;
  }
}
