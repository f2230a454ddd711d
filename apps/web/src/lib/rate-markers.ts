import type { IntervalPoint, RateChange, Run } from "@volley/contracts";
import type { ChartMarker } from "../components/timeline-chart";

/** What a live change set, in the plan's unit: "rate → 40 msg/s per connection (×2)", "connections → 200 (×2)". */
export function describeRateChange(c: RateChange): string {
  const scale = Math.round(c.scale * 1000) / 1000;
  const plan = scale === 1 ? " (the plan's)" : ` (×${scale})`;
  if (c.unit === "connections") return `connections → ${c.rate.toLocaleString("en-US")}${plan}`;
  return `rate → ${c.rate.toLocaleString("en-US")} ${c.unit}${plan}`;
}

/**
 * A run's live rate changes as timeline markers, x in seconds from its first stored interval (where
 * x = 0 begins). A change made in the start lead (the run shown running, its first second not yet
 * begun) took effect from the start: it is drawn there, not left off the chart.
 */
export function rateMarkers(run: Run, intervals: readonly IntervalPoint[]): ChartMarker[] {
  const first = intervals[0];
  if (!first || !run.rateChanges?.length) return [];
  return run.rateChanges.map((c) => ({ x: Math.max(0, (c.at - first.t) / 1000 - 0.5), label: describeRateChange(c) }));
}
