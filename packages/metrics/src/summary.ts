import type { LatencySummary } from "@volley/contracts";
import { type Histogram, histogramMean } from "./histogram";

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

/** Percentiles of a µs histogram, in milliseconds. */
export function latencySummary(h: Histogram | undefined): LatencySummary {
  if (!h || h.totalCount === 0) {
    return { count: 0, min: null, mean: null, p50: null, p90: null, p95: null, p99: null, max: null };
  }
  const ms = (us: number) => round3(us / 1000);
  return {
    count: h.totalCount,
    min: ms(h.minNonZeroValue === Number.MAX_SAFE_INTEGER ? 0 : h.minNonZeroValue),
    mean: ms(histogramMean(h)),
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p95: ms(h.getValueAtPercentile(95)),
    p99: ms(h.getValueAtPercentile(99)),
    max: ms(h.maxValue),
  };
}
