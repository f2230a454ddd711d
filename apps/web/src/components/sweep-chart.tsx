"use client";

import type { Run } from "@volley/contracts";
import { useEffect, useMemo, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { fmtMs, fmtRate } from "../lib/format";
import {
  CURVE_X_LABEL,
  defaultCurveX,
  defaultPercentile,
  linesOnScale,
  referenceLines,
  sweepCurves,
  type Curve,
  type CurvePercentile,
  type CurveX,
  type ReferenceLine,
} from "../lib/sweep-curves";

/** All curves on one x grid (the union of their x values); each curve is null where it has no step. Then one column per reference line. */
function aligned(curves: Curve[], lines: ReferenceLine[]): { data: uPlot.AlignedData; xs: number[] } {
  const xs = [...new Set(curves.flatMap((c) => c.points.map((p) => p.x)))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const cols: (number | null)[][] = [];
  for (const c of curves) {
    const line = xs.map(() => null as number | null);
    const hollow = xs.map(() => null as number | null);
    const marker = xs.map(() => null as number | null);
    c.points.forEach((p, i) => {
      const k = at.get(p.x)!;
      if (p.y === null) return;
      line[k] = p.y;
      if (p.hollow) hollow[k] = p.y;
      if (c.capacity === i || c.knee === i) marker[k] = p.y;
    });
    cols.push(line, hollow, marker);
  }
  for (const l of lines) cols.push(xs.map(() => l.ms));
  return { data: [xs, ...cols] as uPlot.AlignedData, xs };
}

/**
 * Latency vs messages per second, one line per run × concurrency, from the sweep's steps: x
 * deliveries/s (or sent/s), y the chosen percentile (first the one the stop rule judges) on a linear
 * or log scale, the stop rule's own limit on that percentile as a dashed line, one ringed point per
 * curve — the capacity step when the run has a stop rule (the headline's number), else the knee —
 * and failed, cut-short or generator-limited steps drawn hollow; the cursor's legend shows every line's value.
 */
export function SweepChart({ runs }: { runs: Run[] }) {
  const [x, setX] = useState<CurveX>(() => defaultCurveX(runs));
  const [percentile, setPercentile] = useState<CurvePercentile>(() => defaultPercentile(runs));
  const [log, setLog] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  const curves = useMemo(() => sweepCurves(runs, x, percentile), [runs, x, percentile]);
  const ruleLines = useMemo(() => referenceLines(runs, percentile), [runs, percentile]);
  const { drawn: lines, above, highest } = useMemo(() => linesOnScale(ruleLines, curves, log), [ruleLines, curves, log]);

  useEffect(() => {
    const el = ref.current;
    if (!el || curves.length === 0) return;
    const { data } = aligned(curves, lines);
    // Off the chart the legend shows each curve's marked point (capacity, else knee, else its last step), not dashes.
    const series: uPlot.Series[] = [
      {
        label: CURVE_X_LABEL[x],
        value: (_u, v, _s, idx) => (idx == null ? "marked point" : v == null ? "—" : fmtRate(v)),
      },
    ];
    for (const c of curves) {
      const mark = c.points[c.capacity ?? c.knee ?? c.points.length - 1];
      const idle = mark && mark.y !== null ? `${fmtMs(mark.y)} at ${fmtRate(mark.x)}` : "—";
      series.push({
        label: c.label,
        stroke: c.color,
        width: 2,
        spanGaps: true,
        points: { show: true, size: 6, fill: c.color },
        value: (_u, v, _s, idx) => (idx == null ? idle : v == null ? "—" : fmtMs(v)),
      });
      series.push({
        label: `${c.label} failed / cut short / agent-limited`,
        stroke: c.color,
        width: 0,
        points: { show: true, size: 9, fill: "#fff", stroke: c.color, width: 2 },
        paths: () => null,
        value: (_u, v) => (v == null ? "" : "not held"),
      });
      // One marked point per curve: the capacity when there is a stop rule, the knee (shape only) without one.
      const marker = c.capacity !== null ? "capacity (stop rule)" : "knee (no stop rule)";
      series.push({
        label: `${c.label} ${marker}`,
        stroke: "#111827",
        width: 0,
        points: { show: true, size: 14, fill: "rgba(0,0,0,0)", stroke: "#111827", width: 1.5 },
        paths: () => null,
        value: (_u, v) => (v == null ? "" : marker),
      });
    }
    for (const l of lines) series.push({ label: l.label, stroke: "#9ca3af", dash: [6, 4], width: 1, points: { show: false }, value: () => "" });
    const u = new uPlot(
      {
        width: Math.max(300, el.clientWidth),
        height: 360,
        // Linear latency from 0: an auto range of 7.4–7.7 ms would draw noise as a steep fall.
        scales: { x: { time: false }, y: log ? { distr: 3 } : { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [
          { label: series[0]!.label as string, stroke: "#4b5563", grid: { stroke: "#eceef2" } },
          { label: `latency ${percentile} (ms)`, stroke: "#4b5563", grid: { stroke: "#eceef2" }, size: 60 },
        ],
        series,
        cursor: { points: { size: 7 } },
        legend: { live: true },
      },
      data,
      el,
    );
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: 360 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
    };
  }, [curves, lines, log, percentile, x]);

  if (curves.length === 0) {
    return (
      <p className="small muted">
        None of these runs is a sweep or capacity search: a latency-vs-rate curve needs steps (a plan with <code>sweep</code>).
      </p>
    );
  }
  return (
    <div data-testid="sweep-chart">
      <div className="chart-controls small">
        <label>
          X{" "}
          <select value={x} onChange={(e) => setX(e.target.value as CurveX)}>
            <option value="delivery">deliveries/s</option>
            <option value="sent">sent/s</option>
            <option value="received">received/s</option>
            {runs.some((r) => r.summary?.steps?.some((s) => s.users)) ? <option value="users">users started/s</option> : null}
          </select>
        </label>
        <label>
          Percentile{" "}
          <select value={percentile} onChange={(e) => setPercentile(e.target.value as CurvePercentile)}>
            {(["p50", "p90", "p95", "p99", "max"] as const).map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={log} onChange={(e) => setLog(e.target.checked)} /> log scale
        </label>
      </div>
      {above.length > 0 && highest !== null ? (
        <p className="small muted" data-testid="sweep-rule-above">
          {above.map((l) => l.label).join(", ")}: above this chart, whose highest step is {fmtMs(highest)} (tick log scale to see both).
        </p>
      ) : null}
      {ruleLines.length === 0 && runs.some((r) => r.plan.sweep?.stopWhen) ? (
        <p className="small muted" data-testid="sweep-no-rule-line">
          No stop-rule limit on {percentile}: the line is drawn for the percentile the rule judges.
        </p>
      ) : null}
      <div ref={ref} className="chart" />
    </div>
  );
}
