"use client";

import { FINAL_RUN_STATUSES, type IntervalPoint, type Run } from "@volley/contracts";
import { memo, useMemo } from "react";
import { fmtInt } from "../lib/format";
import { rateMarkers } from "../lib/rate-markers";
import { runTimelines } from "../lib/run-timelines";
import { TimelineChart } from "./timeline-chart";

const isFinal = (s: Run["status"]) => FINAL_RUN_STATUSES.includes(s);

/**
 * The run's live timelines, one per concern, cursors in sync: latency percentile bands, message
 * rates with connections, errors and disconnects, and the agents' own health (saturation marked red
 * along the top of every chart; warm-up shaded amber; stages or sweep steps shaded and labelled).
 */
export const RunCharts = memo(function RunCharts({ run, intervals }: { run: Run; intervals: IntervalPoint[] }) {
  const d = useMemo(() => runTimelines(run, intervals), [intervals, run]);
  const markers = useMemo(() => rateMarkers(run, intervals), [intervals, run]);

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

  const common = { x: d.x, warmup: d.warmup, saturated: d.saturated, regions: d.regions, markers, syncKey: `run-${run.id}`, height: 190 };
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
        {markers.length > 0 && (
          <span>
            <span className="key-marker" /> live rate change
          </span>
        )}
        <span>Drag across a chart to zoom, double-click to reset.</span>
      </p>
    </section>
  );
});
