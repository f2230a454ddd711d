"use client";

import Link from "next/link";
import { useMemo } from "react";
import { fmtMs, fmtRate } from "../lib/format";
import type { PlanTrend as Trend } from "@/server/runs/plan-trend";
import { TimelineChart, type ChartSeries } from "./timeline-chart";

/** p95 and throughput of a plan's finished runs, in the order they ran (x: run number). */
export function PlanTrend({ trend }: { trend: Trend }) {
  const d = useMemo(() => {
    const x = trend.points.map((_, i) => i + 1);
    const series: ChartSeries[] = [
      { label: "p95", values: trend.points.map((p) => p.p95), color: "#d97706", format: fmtMs },
      { label: "received/s", values: trend.points.map((p) => p.receiveRate), color: "#16a34a", axis: "right", format: fmtRate },
    ];
    return { x, series, none: x.map(() => false) };
  }, [trend]);
  return (
    <section className="panel chart-panel" data-testid="plan-trend">
      <h2 className="panel-title">
        Trend of <Link href={`/plans/${trend.planId}`}>{trend.planName}</Link> across its runs
      </h2>
      {trend.points.length === 0 ? (
        <p className="small muted">No finished run of this plan yet.</p>
      ) : (
        <TimelineChart x={d.x} series={d.series} yLabel="p95 ms" y2Label="messages/s" warmup={d.none} saturated={d.none} height={200} />
      )}
    </section>
  );
}
