"use client";

import type { SpectrumPoint } from "@volley/contracts";
import { useEffect, useMemo, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { fmtMs } from "../lib/format";
import { decades, fmtPercentile, msAt, percentileX, spectrumKinds } from "../lib/spectrum-axis";
import { axisFacts, fitAxis } from "./timeline-chart";

/**
 * The percentile spectrum of every timed kind in the run (merged histograms): how latency grows
 * into the tail, the view coordinated-omission-free measurement exists for. Log x (percentile),
 * linear or log y.
 */
export function PercentileSpectrum({ spectra }: { spectra: Record<string, SpectrumPoint[]> }) {
  const ref = useRef<HTMLDivElement>(null);
  const [logY, setLogY] = useState(false);
  const kinds = useMemo(() => spectrumKinds(spectra), [spectra]);

  useEffect(() => {
    const el = ref.current;
    if (!el || kinds.length === 0) return;
    const tables = kinds.map((k) => {
      const pts = spectra[k.metric]!;
      const total = pts.at(-1)!.count;
      return [pts.map((p) => percentileX(p.percentile, total)), pts.map((p) => (logY ? Math.max(p.ms, 0.001) : p.ms))] as [number[], number[]];
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
            show: !k.hidden,
            width: 1.75,
            spanGaps: true,
            points: { show: false },
            value: (_u: uPlot, v: number | null, _s: number, idx: number | null) => fmtMs(idx == null ? msAt(spectra[k.metric]!, 99) : v),
          })),
        ],
        cursor: { points: { size: 6 } },
        legend: { live: true },
        plugins: [axisFacts()],
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
