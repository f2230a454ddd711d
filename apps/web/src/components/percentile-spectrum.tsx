"use client";

import { HISTOGRAMS, type SpectrumPoint } from "@volley/contracts";
import { useEffect, useMemo, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { fmtMs } from "../lib/format";
import { fitAxis } from "./timeline-chart";

const KINDS: { metric: string; label: string; color: string }[] = [
  { metric: HISTOGRAMS.messageLatency, label: "round trip", color: "#2563eb" },
  { metric: "message.delivery", label: "delivery", color: "#16a34a" },
  { metric: HISTOGRAMS.wsConnect, label: "connect", color: "#7c3aed" },
  { metric: HISTOGRAMS.sendLag, label: "send lag", color: "#be123c" },
];

/** x = 1/(1−p): the HdrHistogram plot's axis, where 90, 99 and 99.9 sit a decade apart. */
const toX = (p: number, total: number) => (p >= 100 ? Math.max(total, 10) : 1 / (1 - p / 100));
const fmtPercentile = (x: number) => {
  const p = 100 * (1 - 1 / x);
  return p <= 0
    ? "0%"
    : `${
        p >= 99
          ? p
              .toPrecision(Math.max(3, Math.ceil(-Math.log10(1 - p / 100)) + 1))
              .replace(/0+$/, "")
              .replace(/\.$/, "")
          : Math.round(p)
      }%`;
};

/** The value at percentile `p` of a spectrum (the first point at or past it), ms. */
export function msAt(points: SpectrumPoint[], p: number): number | null {
  return (points.find((pt) => pt.percentile >= p) ?? points.at(-1))?.ms ?? null;
}

/** x = 1, 10, 100 … (0 %, 90 %, 99 % …) within [min, max], and x = 2 (50 %) when there is room. */
export function decades(min: number, max: number): number[] {
  const out: number[] = [];
  for (let x = 1; x <= max * 1.0001; x *= 10) if (x >= min / 1.0001) out.push(x);
  if (max >= 10 && 2 >= min) out.splice(1, 0, 2);
  return out;
}

/**
 * The percentile spectrum of every timed kind in the run (merged histograms): how latency grows
 * into the tail, the view coordinated-omission-free measurement exists for. Log x (percentile),
 * linear or log y.
 */
export function PercentileSpectrum({ spectra }: { spectra: Record<string, SpectrumPoint[]> }) {
  const ref = useRef<HTMLDivElement>(null);
  const [logY, setLogY] = useState(false);
  const kinds = useMemo(
    () => [
      ...KINDS.filter((k) => (spectra[k.metric]?.length ?? 0) > 0),
      ...Object.keys(spectra)
        .filter((m) => !KINDS.some((k) => k.metric === m) && spectra[m]!.length > 0)
        .map((m) => ({ metric: m, label: m, color: "#6b7280" })),
    ],
    [spectra],
  );

  useEffect(() => {
    const el = ref.current;
    if (!el || kinds.length === 0) return;
    const tables = kinds.map((k) => {
      const pts = spectra[k.metric]!;
      const total = pts.at(-1)!.count;
      return [pts.map((p) => toX(p.percentile, total)), pts.map((p) => (logY ? Math.max(p.ms, 0.001) : p.ms))] as [number[], number[]];
    });
    const data = uPlot.join(tables);
    const axis = {
      stroke: "#4b5563",
      grid: { stroke: "#eceef2", width: 1 },
      ticks: { stroke: "#d6d9df", width: 1 },
      font: "11px system-ui, sans-serif",
      labelFont: "12px system-ui, sans-serif",
    };
    const u = new uPlot(
      {
        width: Math.max(300, el.clientWidth),
        height: 260,
        scales: { x: { time: false, distr: 3, log: 10 }, y: logY ? { distr: 3, log: 10 } : { range: (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1] } },
        axes: [
          // Decades only (0, 90, 99, 99.9 … %): log splits at 2, 3, 4… crowded their labels into each other.
          {
            ...axis,
            splits: (_u, _i, min, max) => decades(min, max),
            values: (_u, vals) => vals.map((v) => (v == null ? "" : fmtPercentile(v))),
            label: "percentile",
            labelSize: 20,
            size: 36,
          },
          { ...axis, label: "ms", size: fitAxis, labelSize: 20, labelGap: 2 },
        ],
        series: [
          // Off the chart the legend reads the run's p99 of every kind, not dashes.
          { label: "percentile", value: (_u, v, _s, idx) => (idx == null ? "99%" : v == null ? "—" : fmtPercentile(v)) },
          ...kinds.map((k) => ({
            label: k.label,
            stroke: k.color,
            width: 1.75,
            spanGaps: true,
            points: { show: false },
            value: (_u: uPlot, v: number | null, _s: number, idx: number | null) => fmtMs(idx == null ? msAt(spectra[k.metric]!, 99) : v),
          })),
        ],
        cursor: { points: { size: 6 } },
        legend: { live: true },
      },
      data,
      el,
    );
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: 260 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
    };
  }, [kinds, spectra, logY]);

  if (kinds.length === 0) return <p className="muted">No samples were recorded, so there is no distribution to draw.</p>;
  return (
    <div data-testid="percentile-spectrum">
      <label className="inline-toggle small">
        <input type="checkbox" checked={logY} onChange={(e) => setLogY(e.target.checked)} /> log latency axis
      </label>
      <div ref={ref} className="chart" />
    </div>
  );
}
