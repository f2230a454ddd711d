"use client";

import type { PlanTrend as Trend, TrendMetric } from "@volley/contracts";
import Link from "next/link";
import { useMemo } from "react";
import { fmtDateTime, fmtInt, fmtMs, fmtPercent, fmtRate } from "../lib/format";
import { StatusBadge } from "./status-badge";
import { TimelineChart, type ChartSeries } from "./timeline-chart";

/** x is the run's number in the table below. */
const RUN_AXIS = { label: "run", format: (v: number) => `#${v}`, none: "hover a run" };

const METRIC_LABEL: Record<TrendMetric, string> = { p95: "p95", capacity: "capacity", errorRate: "error rate", receiveRate: "received/s" };

/** A plan's finished runs in the order they ran (x: run number): p95, capacity and errors, regressions against the baseline flagged. */
export function PlanTrend({ trend }: { trend: Trend }) {
  const d = useMemo(() => {
    const x = trend.points.map((_, i) => i + 1);
    const hasCapacity = trend.points.some((p) => p.capacity !== null);
    // Off the chart, each legend shows the latest run's figure.
    const last = trend.points.at(-1);
    const latest = (v: number | null | undefined, f: (v: number) => string) => (v === null || v === undefined ? null : `${f(v)} latest`);
    const series: ChartSeries[] = [
      { label: "p95", values: trend.points.map((p) => p.p95), color: "#d97706", format: fmtMs, runValue: latest(last?.p95, fmtMs) },
      hasCapacity
        ? {
            label: "capacity",
            values: trend.points.map((p) => p.capacity),
            color: "#7c3aed",
            axis: "right",
            format: fmtRate,
            runValue: latest(last?.capacity, fmtRate),
          }
        : {
            label: "received/s",
            values: trend.points.map((p) => p.receiveRate),
            color: "#16a34a",
            axis: "right",
            format: fmtRate,
            runValue: latest(last?.receiveRate, fmtRate),
          },
    ];
    const errors: ChartSeries[] = [
      {
        label: "error rate",
        values: trend.points.map((p) => p.errorRate),
        color: "#c81e1e",
        format: (v) => fmtPercent(v, 2),
        runValue: latest(last?.errorRate, (v) => fmtPercent(v, 2)),
      },
    ];
    return { x, series, errors, none: x.map(() => false), y2: hasCapacity ? "capacity msg/s" : "messages/s" };
  }, [trend]);
  const regressed = trend.points.filter((p) => p.regressions.length > 0).length;
  return (
    <>
      <section className="panel" data-testid="plan-trend">
        <h2 className="panel-title">
          {trend.points.length} finished run{trend.points.length === 1 ? "" : "s"} of <Link href={`/plans/${trend.planId}`}>{trend.planName}</Link>
        </h2>
        <p className="small muted">
          {trend.baselineRunId ? (
            <>
              Judged against the baseline <Link href={`/runs/${trend.baselineRunId}`}>{trend.baselineRunId}</Link>: a run {trend.tolerancePct}% worse on a
              metric (past its noise floor) is flagged.{" "}
              {regressed > 0 ? <strong className="bad">{regressed} regressed.</strong> : <span className="good">None regressed.</span>}
            </>
          ) : (
            <>No baseline: mark a run as the plan&apos;s baseline (on the run&apos;s page) to flag regressions against it.</>
          )}
        </p>
      </section>
      {trend.points.length > 0 && (
        <section className="charts">
          <div className="panel chart-panel">
            <h2 className="panel-title">p95 and {d.y2.startsWith("capacity") ? "capacity" : "throughput"} by run</h2>
            <TimelineChart x={d.x} series={d.series} yLabel="p95 ms" y2Label={d.y2} warmup={d.none} saturated={d.none} height={200} xAxis={RUN_AXIS} />
          </div>
          <div className="panel chart-panel">
            <h2 className="panel-title">Error rate by run</h2>
            <TimelineChart x={d.x} series={d.errors} yLabel="% of attempts" warmup={d.none} saturated={d.none} height={160} xAxis={RUN_AXIS} />
          </div>
        </section>
      )}
      <div className="panel flush">
        <table className="table trend-table" data-testid="trend-table">
          <thead>
            <tr>
              <th className="num">#</th>
              <th>Run</th>
              <th>Status</th>
              <th className="num">p95</th>
              <th className="num">Capacity</th>
              <th className="num">Received/s</th>
              <th className="num">Errors</th>
              <th>Against baseline</th>
            </tr>
          </thead>
          <tbody>
            {trend.points.map((p, i) => (
              <tr key={p.runId} data-run={p.runId} className={p.regressions.length > 0 ? "regressed" : undefined}>
                <td className="num">{i + 1}</td>
                <td>
                  <Link href={`/runs/${p.runId}`}>{p.name}</Link>
                  <div className="subtle small" suppressHydrationWarning>
                    {fmtDateTime(p.at)}
                    {p.planVersion !== null && <span data-testid="trend-version"> · plan v{p.planVersion}</span>}{" "}
                    {p.tags.map((t) => (
                      <span key={t} className="tag-chip">
                        {t}
                      </span>
                    ))}
                  </div>
                </td>
                <td>
                  <StatusBadge status={p.status} />
                </td>
                <td className={p.regressions.includes("p95") ? "num bad" : "num"}>{fmtMs(p.p95)}</td>
                <td className={p.regressions.includes("capacity") ? "num bad" : "num"}>{fmtRate(p.capacity)}</td>
                <td className={p.regressions.includes("receiveRate") ? "num bad" : "num"}>{fmtRate(p.receiveRate)}</td>
                <td className={p.regressions.includes("errorRate") ? "num bad" : "num"}>
                  {fmtInt(p.errors)} <span className="subtle small">{fmtPercent(p.errorRate, 2)}</span>
                </td>
                <td>
                  {p.runId === trend.baselineRunId ? (
                    <span className="badge baseline-badge">baseline</span>
                  ) : p.regressions.length > 0 ? (
                    <span className="bad" data-testid="regression">
                      regressed: {p.regressions.map((r) => METRIC_LABEL[r]).join(", ")}
                      {differentVersion(p.planVersion, trend.baselinePlanVersion) && (
                        <span className="warn small" data-testid="version-differs">
                          {" "}
                          (v{p.planVersion} against a v{trend.baselinePlanVersion} baseline: the plan changed)
                        </span>
                      )}
                    </span>
                  ) : trend.baselineRunId ? (
                    <span className="good small">ok</span>
                  ) : (
                    <span className="subtle small">—</span>
                  )}
                  {trend.baselineRunId && p.runId !== trend.baselineRunId && (
                    <>
                      {" "}
                      <Link className="small" href={`/compare?runs=${trend.baselineRunId},${p.runId}`}>
                        compare
                      </Link>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** Both versions known and not the same: the two runs ran different plans. */
function differentVersion(run: number | null, baseline: number | null): boolean {
  return run !== null && baseline !== null && run !== baseline;
}
