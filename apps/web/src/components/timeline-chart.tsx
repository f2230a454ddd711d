"use client";

import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  /** Left axis (default) or the right one, for a second unit. */
  axis?: "left" | "right";
  dash?: number[];
  width?: number;
  fill?: string;
  /** Initially hidden (click the legend to show). */
  hidden?: boolean;
  format: (v: number | null) => string;
}

export interface TimelineChartProps {
  /** Seconds since the run started, one per interval. */
  x: number[];
  series: ChartSeries[];
  yLabel: string;
  y2Label?: string;
  /** Per-interval marks drawn behind the lines. */
  warmup: boolean[];
  saturated: boolean[];
  height?: number;
}

const AXIS = { stroke: "#4b5563", grid: { stroke: "#eceef2", width: 1 }, ticks: { stroke: "#d6d9df", width: 1 }, font: "11px system-ui, sans-serif", labelFont: "12px system-ui, sans-serif" };

/** Shades warm-up intervals and marks saturated ones (agent was the bottleneck), under the series. */
function intervalMarks(get: () => { x: number[]; warmup: boolean[]; saturated: boolean[] }): uPlot.Plugin {
  return {
    hooks: {
      drawClear: [
        (u) => {
          const { x, warmup, saturated } = get();
          const { ctx } = u;
          const { left, top, width, height } = u.bbox;
          ctx.save();
          ctx.beginPath();
          ctx.rect(left, top, width, height);
          ctx.clip();
          for (let i = 0; i < x.length; i++) {
            const xi = x[i]!;
            const x0 = u.valToPos(xi - 0.5, "x", true);
            const x1 = u.valToPos(xi + 0.5, "x", true);
            if (warmup[i]) {
              ctx.fillStyle = "rgba(245, 158, 11, 0.13)";
              ctx.fillRect(x0, top, x1 - x0, height);
            }
            if (saturated[i]) {
              ctx.fillStyle = "rgba(220, 38, 38, 0.55)";
              ctx.fillRect(x0, top, x1 - x0, 5 * uPlot.pxRatio);
            }
          }
          ctx.restore();
        },
      ],
    },
  };
}

function buildOptions(props: TimelineChartProps, width: number, marks: uPlot.Plugin): uPlot.Options {
  const hasRight = props.series.some((s) => s.axis === "right");
  const axes: uPlot.Axis[] = [
    { ...AXIS, values: (_u, vals) => vals.map((v) => `${v}s`), size: 36 },
    { ...AXIS, scale: "y", label: props.yLabel, size: 56, labelSize: 18 },
  ];
  if (hasRight) axes.push({ ...AXIS, scale: "y2", side: 1, label: props.y2Label ?? "", size: 56, labelSize: 18, grid: { show: false } });
  return {
    width,
    height: props.height ?? 240,
    scales: {
      x: { time: false, range: (_u, min, max) => (min === max ? [min - 1, max + 1] : [min, max]) },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1] },
      // Headroom on the right axis keeps a flat connections line from hiding under a flat rate line.
      y2: { range: (_u, _min, max) => [0, max > 0 ? max * 1.3 : 1] },
    },
    axes,
    series: [
      { label: "second", value: (_u, v) => (v === null ? "—" : `${v}s`) },
      ...props.series.map<uPlot.Series>((s) => ({
        label: s.label,
        stroke: s.color,
        width: s.width ?? 1.75,
        dash: s.dash,
        fill: s.fill,
        show: !s.hidden,
        scale: s.axis === "right" ? "y2" : "y",
        spanGaps: false,
        points: { show: (u: uPlot) => (u.data[0]?.length ?? 0) < 3 },
        value: (_u: uPlot, v: number | null) => s.format(v),
      })),
    ],
    legend: { live: true },
    cursor: { drag: { x: true, y: false }, points: { size: 6 } },
    plugins: [marks],
  };
}

function toData(props: TimelineChartProps): uPlot.AlignedData {
  return [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData;
}

/**
 * A uPlot timeline. The chart is created once on mount (and again only if the series change
 * shape), fed new data with setData on every poll, resized with its container, destroyed on unmount.
 */
export function TimelineChart(props: TimelineChartProps) {
  const ref = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(props);
  latest.current = props;
  const shape = props.series.map((s) => `${s.label}:${s.axis ?? "left"}`).join("|") + `|${props.height ?? 240}`;

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const marks = intervalMarks(() => latest.current);
    const u = new uPlot(buildOptions(latest.current, Math.max(200, el.clientWidth), marks), toData(latest.current), el);
    plot.current = u;
    const ro = new ResizeObserver(() => {
      const w = Math.max(200, el.clientWidth);
      if (w !== u.width) u.setSize({ width: w, height: latest.current.height ?? 240 });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(toData(props));
  }, [props]);

  return <div ref={ref} className="chart" />;
}
