"use client";

import { FINAL_RUN_STATUSES, type IntervalPoint, type Run } from "@volley/contracts";
import { memo, useMemo } from "react";
import { fmtInt, fmtMs, fmtRate } from "../lib/format";
import { timelineThresholds } from "../lib/headline-cards";
import { stepRegions } from "../lib/step-regions";
import { TimelineChart, type ChartSeries } from "./timeline-chart";

const fmtPct = (v: number | null) => (v === null ? "—" : `${Math.round(v)}%`);
const isFinal = (s: Run["status"]) => FINAL_RUN_STATUSES.includes(s);

/**
 * The run's live timelines, one per concern, cursors in sync: latency percentile bands, message
 * rates with connections, errors and disconnects, and the agents' own health (saturation marked red
 * along the top of every chart; warm-up shaded amber; stages or sweep steps shaded and labelled).
 */
export const RunCharts = memo(function RunCharts({ run, intervals }: { run: Run; intervals: IntervalPoint[] }) {
  const d = useMemo(() => {
    const start = intervals[0]?.index ?? 0;
    const col = <T,>(f: (p: IntervalPoint) => T) => intervals.map(f);
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
        : [
            { label: "received/s", values: col((p) => p.received), color: "#16a34a", format: fmtRate, runValue: s && `${fmtRate(s.messages.receiveRate)} avg` },
          ]),
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
  }, [intervals, run]);

  if (intervals.length === 0) {
    const message =
      run.status === "queued"
        ? "Waiting for a hub to pick up this run. Charts appear with the first measured second."
        : run.status === "running"
          ? "The run has started; the first interval arrives about a second after the load begins."
          : `No measurements were recorded: the run ended (${run.status}) before any interval was stored.${run.reason ? " See the reason above." : ""}`;
    return (
      <div className={`panel charts-empty${isFinal(run.status) ? "" : " waiting"}`} data-testid="charts-empty">
        {!isFinal(run.status) && <span className="spinner" aria-hidden="true" />}
        <p>{message}</p>
      </div>
    );
  }

  const common = { x: d.x, warmup: d.warmup, saturated: d.saturated, regions: d.regions, syncKey: `run-${run.id}`, height: 190 };
  const anySaturated = d.saturated.some(Boolean);
  return (
    <section className="charts charts-grid" data-testid="run-charts" data-points={intervals.length}>
      <div className="panel chart-panel">
        <h2 className="panel-title">{d.deliveryOnly ? "Delivery latency" : "Latency"} (ms, from intended send time)</h2>
        <TimelineChart
          {...common}
          series={d.latency}
          thresholds={d.latencyThresholds}
          yLabel="ms"
          bands={[
            { upper: "p95", lower: "p50", fill: "rgba(37, 99, 235, 0.10)" },
            { upper: "p99", lower: "p95", fill: "rgba(220, 38, 38, 0.08)" },
          ]}
        />
      </div>
      <div className="panel chart-panel">
        <h2 className="panel-title">Messages per second and connections</h2>
        <TimelineChart {...common} series={d.throughput} thresholds={d.throughputThresholds} yLabel="messages/s" y2Label="connections" />
      </div>
      <div className="panel chart-panel">
        <h2 className="panel-title">
          Errors and disconnects{!d.anyProblem && <span className="title-note good">{isFinal(run.status) ? " none" : " none so far"}</span>}
        </h2>
        <TimelineChart {...common} series={d.problems} yLabel="per second" />
      </div>
      <div className="panel chart-panel">
        <h2 className="panel-title">
          Agent health
          {anySaturated ? (
            <span className="title-note bad"> saturated in {fmtInt(d.saturated.filter(Boolean).length)} s</span>
          ) : (
            <span className="title-note good"> not saturated</span>
          )}
        </h2>
        <TimelineChart {...common} series={d.health} yLabel="CPU % of a core" y2Label="ms" />
      </div>
      <p className="chart-key small subtle">
        <span>
          <span className="key-band" /> p50–p95 and p95–p99 bands
        </span>
        {d.warmup.some(Boolean) && (
          <span>
            <span className="key-warmup" /> warm-up (left out of the summary)
          </span>
        )}
        <span>
          <span className="key-saturated" /> agent saturated (its own CPU or send lag was the bottleneck)
        </span>
        {d.regions.length > 0 && (
          <span>
            <span className="key-region" /> stages / steps
          </span>
        )}
        <span>Drag across a chart to zoom, double-click to reset.</span>
      </p>
    </section>
  );
});
