import type { RunSummary } from "@volley/contracts";
import { fmtInt, fmtMs, fmtPercent, fmtRate } from "./format";

/**
 * The numbers runs are compared on, each with the direction that is better (lower latency, higher
 * throughput), and the deltas of one run against another (the baseline). Used by the compare
 * table and by the plan trend's regression flags, so both judge a run the same way.
 */

export type Better = "lower" | "higher";

export interface CompareMetric {
  key: string;
  label: string;
  better: Better;
  /** How a value is shown. */
  format: (v: number | null) => string;
  value: (s: RunSummary) => number | null;
  /**
   * A change smaller than this (in the metric's unit) is noise, never flagged: a p95 of 0.4 ms
   * becoming 0.5 ms is +25% but says nothing.
   */
  minChange: number;
}

/** The run's headline latency: round trips, or deliveries when it timed none (groups, broadcast without echo). */
const headline = (s: RunSummary) => (s.latency.count === 0 && s.deliveries ? s.deliveries.latency : s.latency);
const errorsTotal = (s: RunSummary) => Object.values(s.errors).reduce((a, b) => a + b, 0);
const attempts = (s: RunSummary) => s.messages.sent + s.connect.opened + s.connect.failed;

export const COMPARE_METRICS: CompareMetric[] = [
  { key: "p50", label: "Latency p50", better: "lower", format: fmtMs, value: (s) => headline(s).p50, minChange: 1 },
  { key: "p95", label: "Latency p95", better: "lower", format: fmtMs, value: (s) => headline(s).p95, minChange: 1 },
  { key: "p99", label: "Latency p99", better: "lower", format: fmtMs, value: (s) => headline(s).p99, minChange: 1 },
  { key: "sendRate", label: "Sent/s", better: "higher", format: fmtRate, value: (s) => s.messages.sendRate, minChange: 1 },
  { key: "receiveRate", label: "Received/s", better: "higher", format: fmtRate, value: (s) => s.messages.receiveRate, minChange: 1 },
  {
    key: "capacity",
    label: "Capacity",
    better: "higher",
    format: fmtRate,
    value: (s) => s.capacity?.sendRate ?? null,
    minChange: 1,
  },
  { key: "connectP95", label: "Connect p95", better: "lower", format: fmtMs, value: (s) => s.connect.latency.p95, minChange: 1 },
  { key: "lost", label: "Lost", better: "lower", format: fmtInt, value: (s) => s.messages.lost, minChange: 1 },
  { key: "errors", label: "Errors", better: "lower", format: fmtInt, value: errorsTotal, minChange: 1 },
  {
    key: "errorRate",
    label: "Error rate",
    better: "lower",
    format: (v) => fmtPercent(v, 2),
    value: (s) => (attempts(s) > 0 ? (100 * errorsTotal(s)) / attempts(s) : null),
    minChange: 0.1,
  },
];

export interface MetricDelta {
  key: string;
  label: string;
  better: Better;
  base: number | null;
  value: number | null;
  /** value − base; null when either is missing. */
  abs: number | null;
  /** (value − base) / base × 100; null when either is missing or base is 0. */
  rel: number | null;
  /** better / worse than the base past the metric's noise floor and `tolerancePct`; same otherwise. */
  verdict: "better" | "worse" | "same" | "n/a";
}

/** Relative change under which a run counts as the same as its baseline (regressions are flagged past it). */
export const REGRESSION_TOLERANCE_PCT = 10;

export function deltaOf(m: CompareMetric, base: RunSummary | null, run: RunSummary | null, tolerancePct = REGRESSION_TOLERANCE_PCT): MetricDelta {
  const b = base ? m.value(base) : null;
  const v = run ? m.value(run) : null;
  const abs = b === null || v === null ? null : v - b;
  const rel = abs === null || b === 0 || b === null ? null : (100 * abs) / Math.abs(b);
  let verdict: MetricDelta["verdict"] = "n/a";
  if (abs !== null) {
    const big = Math.abs(abs) >= m.minChange && (rel === null || Math.abs(rel) >= tolerancePct);
    const up = abs > 0;
    verdict = !big ? "same" : up === (m.better === "higher") ? "better" : "worse";
  }
  return { key: m.key, label: m.label, better: m.better, base: b, value: v, abs, rel, verdict };
}

/** A signed delta for a table cell: "+12.5 ms", "−3/s". */
export function fmtDelta(m: CompareMetric, abs: number | null): string {
  if (abs === null) return "—";
  const sign = abs > 0 ? "+" : abs < 0 ? "−" : "±";
  return `${sign}${m.format(Math.abs(abs))}`;
}

export function fmtRel(rel: number | null): string {
  if (rel === null) return "—";
  const sign = rel > 0 ? "+" : rel < 0 ? "−" : "±";
  return `${sign}${Math.abs(rel).toFixed(1)}%`;
}
