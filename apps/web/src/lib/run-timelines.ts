import type { IntervalPoint, Run } from "@volley/contracts";
import type { ChartRegion, ChartSeries } from "../components/timeline-chart";
import { fmtInt, fmtMs, fmtRate } from "./format";
import { timelineThresholds } from "./headline-cards";
import { stepRegions } from "./step-regions";

const fmtPct = (v: number | null) => (v === null ? "—" : `${Math.round(v)}%`);

/** A run's timelines, shaped once for the run page (RunCharts) and the HTML report alike. */
export interface RunTimelines {
  /** Seconds from the first interval. */
  x: number[];
  warmup: boolean[];
  saturated: boolean[];
  latency: ChartSeries[];
  /** Messages per second (left axis) and open connections (right). */
  throughput: ChartSeries[];
  problems: ChartSeries[];
  /** CPU % (left axis), event-loop delay and send lag in ms (right). */
  health: ChartSeries[];
  anyProblem: boolean;
  regions: ChartRegion[];
  deliveryOnly: boolean;
  latencyThresholds: { value: number; label: string; ok?: boolean }[];
  throughputThresholds: { value: number; label: string; ok?: boolean }[];
}

/**
 * The series of a run's four timelines, one per concern: latency percentiles, message rates with
 * connections, errors and disconnects, and the agents' own health; with the warm-up and saturated
 * seconds, the stages or sweep steps to shade and the plan's thresholds on each. Each legend's
 * `runValue` is the run's own figure for its line (the summary's, merged from histograms).
 */
export function runTimelines(run: Run, intervals: IntervalPoint[]): RunTimelines {
  const start = intervals[0]?.index ?? 0;
  const col = <T>(f: (p: IntervalPoint) => T) => intervals.map(f);
  const x = col((p) => p.index - start);
  // A sweep's gaps send nothing by design: draw each step's latency across them.
  const spanGaps = run.plan.sweep !== undefined;
  const hasDelivery = intervals.some((p) => p.delivery);
  // Groups and broadcast without echo have no round trips: their latency is the delivery's.
  const deliveryOnly = hasDelivery && intervals.every((p) => p.p50 === null);
  // Off the chart, each legend shows the run's own figure for its line (the summary's, merged from histograms).
  const s = run.summary;
  const rl = deliveryOnly ? s?.deliveries?.latency : s?.latency;
  const total = (f: (p: IntervalPoint) => number) => `${fmtInt(intervals.reduce((n, p) => n + f(p), 0))} in all`;
  const max = (f: (p: IntervalPoint) => number) => intervals.reduce((m, p) => Math.max(m, f(p)), 0);
  const latency: ChartSeries[] = deliveryOnly
    ? [
        { label: "p50", values: col((p) => p.delivery?.p50 ?? null), color: "#2563eb", format: fmtMs, spanGaps, runValue: rl && fmtMs(rl.p50) },
        { label: "p95", values: col((p) => p.delivery?.p95 ?? null), color: "#d97706", format: fmtMs, spanGaps, runValue: rl && fmtMs(rl.p95) },
        { label: "p99", values: col((p) => p.delivery?.p99 ?? null), color: "#dc2626", format: fmtMs, spanGaps, runValue: rl && fmtMs(rl.p99) },
      ]
    : [
        { label: "p50", values: col((p) => p.p50), color: "#2563eb", format: fmtMs, spanGaps, runValue: rl && fmtMs(rl.p50) },
        { label: "p95", values: col((p) => p.p95), color: "#d97706", format: fmtMs, spanGaps, runValue: rl && fmtMs(rl.p95) },
        { label: "p99", values: col((p) => p.p99), color: "#dc2626", format: fmtMs, spanGaps, runValue: rl && fmtMs(rl.p99) },
        {
          label: "max",
          values: col((p) => p.max),
          color: "#6b7280",
          dash: [4, 4],
          width: 1,
          hidden: true,
          format: fmtMs,
          spanGaps,
          runValue: rl && fmtMs(rl.max),
        },
        ...(hasDelivery
          ? [
              {
                label: "delivery p95",
                values: col((p) => p.delivery?.p95 ?? null),
                color: "#0d9488",
                dash: [6, 3],
                format: fmtMs,
                spanGaps,
                runValue: s?.deliveries && fmtMs(s.deliveries.latency.p95),
              },
            ]
          : []),
      ];
  const throughput: ChartSeries[] = [
    { label: "sent/s", values: col((p) => p.sent), color: "#2563eb", format: fmtRate, runValue: s && `${fmtRate(s.messages.sendRate)} avg` },
    ...(deliveryOnly
      ? []
      : [{ label: "received/s", values: col((p) => p.received), color: "#16a34a", format: fmtRate, runValue: s && `${fmtRate(s.messages.receiveRate)} avg` }]),
    ...(hasDelivery
      ? [
          {
            label: "delivered/s",
            values: col((p) => p.delivery?.received ?? 0),
            color: "#0d9488",
            format: fmtRate,
            runValue: s?.deliveries && `${fmtRate(s.deliveries.rate)} avg`,
          },
        ]
      : []),
    {
      label: "connections",
      values: col((p) => p.connections),
      color: "#7c3aed",
      axis: "right",
      width: 1.25,
      fill: "rgba(124, 58, 237, 0.06)",
      format: fmtInt,
      runValue: `${fmtInt(max((p) => p.connections))} peak`,
    },
  ];
  const problems: ChartSeries[] = [
    { label: "errors/s", values: col((p) => p.errors), color: "#dc2626", format: fmtRate, runValue: total((p) => p.errors) },
    { label: "disconnects/s", values: col((p) => p.disconnects), color: "#9333ea", format: fmtRate, runValue: total((p) => p.disconnects) },
    {
      label: "lost/s",
      values: col((p) => p.lost + (p.delivery?.lost ?? 0)),
      color: "#ea580c",
      format: fmtRate,
      runValue: total((p) => p.lost + (p.delivery?.lost ?? 0)),
    },
    {
      label: "connect failures/s",
      values: col((p) => p.connectFailed),
      color: "#0f766e",
      width: 1,
      format: fmtRate,
      runValue: total((p) => p.connectFailed),
    },
  ];
  const health: ChartSeries[] = [
    { label: "CPU (worst agent)", values: col((p) => p.health.cpu), color: "#0891b2", format: fmtPct, runValue: `${fmtPct(max((p) => p.health.cpu))} max` },
    {
      label: "event-loop delay",
      values: col((p) => p.health.eventLoopMs),
      color: "#a16207",
      axis: "right",
      width: 1.25,
      format: fmtMs,
      runValue: `${fmtMs(max((p) => p.health.eventLoopMs))} max`,
    },
    {
      label: "send lag",
      values: col((p) => p.health.sendLagMs),
      color: "#be123c",
      axis: "right",
      width: 1.25,
      format: fmtMs,
      runValue: `${fmtMs(max((p) => p.health.sendLagMs))} max`,
    },
  ];
  return {
    x,
    warmup: col((p) => p.warmup),
    saturated: col((p) => p.saturated),
    latency,
    throughput,
    problems,
    health,
    anyProblem: intervals.some((p) => p.errors + p.disconnects + p.lost + (p.delivery?.lost ?? 0) + p.connectFailed > 0),
    regions: stepRegions(run, intervals),
    deliveryOnly,
    latencyThresholds: timelineThresholds(run, "latency", deliveryOnly),
    throughputThresholds: timelineThresholds(run, "throughput", deliveryOnly),
  };
}
