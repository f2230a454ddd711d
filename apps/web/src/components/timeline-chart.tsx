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
  /** Draw across seconds without a value (a sweep's gaps send nothing by design); off, a gap shows as a gap. */
  spanGaps?: boolean;
  format: (v: number | null) => string;
  /** The legend's value when the cursor is off the chart: the run's own figure ("12.3 ms", "1,200/s avg"). */
  runValue?: string | null;
}

/** A plan threshold drawn across a chart as a dashed line at `value` (in the axis' unit). */
export interface ChartThreshold {
  value: number;
  label: string;
  ok?: boolean;
  axis?: "left" | "right";
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
  /** Stage or sweep-step spans (x in seconds) shaded alternately and labelled; failed ones hatched. */
  regions?: ChartRegion[];
  /** Fills between two series (by label), e.g. the p50–p95 band. */
  bands?: { upper: string; lower: string; fill: string }[];
  /** Plan thresholds on this chart's figures. */
  thresholds?: ChartThreshold[];
  /** Moments to mark (live rate changes). */
  markers?: ChartMarker[];
  /** Charts with the same key share the cursor. */
  syncKey?: string;
  height?: number;
  /** What x counts (default: seconds since the run's start): the legend's label, how a value reads, and the legend's text when no point is hovered. */
  xAxis?: { label: string; format: (v: number) => string; none: string };
}

/** A moment on the timeline (a live rate change): a vertical line with its label. */
export interface ChartMarker {
  x: number;
  label: string;
}

export interface ChartRegion {
  from: number;
  to: number;
  label: string;
  failed?: boolean;
}

const AXIS = {
  stroke: "#4b5563",
  grid: { stroke: "#eceef2", width: 1 },
  ticks: { stroke: "#d6d9df", width: 1 },
  font: "11px system-ui, sans-serif",
  labelFont: "12px system-ui, sans-serif",
};

/** Shades warm-up intervals and marks saturated ones (agent was the bottleneck), under the series. */
function intervalMarks(get: () => { x: number[]; warmup: boolean[]; saturated: boolean[]; regions?: ChartRegion[] }): uPlot.Plugin {
  // Consecutive marked seconds are drawn as one rectangle: a one-hour run has 3,600 of them.
  const spans = (x: number[], on: boolean[], each: (from: number, to: number) => void) => {
    for (let i = 0; i < x.length; i++) {
      if (!on[i]) continue;
      let j = i;
      while (j + 1 < x.length && on[j + 1] && x[j + 1]! - x[j]! === 1) j++;
      each(x[i]! - 0.5, x[j]! + 0.5);
      i = j;
    }
  };
  return {
    hooks: {
      drawClear: [
        (u) => {
          const { x, warmup, saturated, regions } = get();
          const { ctx } = u;
          const { left, top, width, height } = u.bbox;
          const px = (v: number) => u.valToPos(v, "x", true);
          ctx.save();
          ctx.beginPath();
          ctx.rect(left, top, width, height);
          ctx.clip();
          const labelled: { label: string; x: number; maxWidth: number }[] = [];
          (regions ?? []).forEach((r, n) => {
            const x0 = px(r.from);
            const x1 = px(r.to);
            ctx.fillStyle = r.failed ? "rgba(220, 38, 38, 0.07)" : n % 2 ? "rgba(100, 116, 139, 0.08)" : "rgba(100, 116, 139, 0.03)";
            ctx.fillRect(x0, top, x1 - x0, height);
            ctx.strokeStyle = "rgba(100, 116, 139, 0.35)";
            ctx.lineWidth = uPlot.pxRatio;
            ctx.beginPath();
            ctx.moveTo(Math.round(x0) + 0.5, top);
            ctx.lineTo(Math.round(x0) + 0.5, top + height);
            ctx.stroke();
            // The label sits on the visible part of its span: the first stage starts half a second
            // before the first plotted second, where a label at its start was cut off.
            const l0 = Math.max(x0, left);
            const l1 = Math.min(x1, left + width);
            if (l1 - l0 > 30 * uPlot.pxRatio) {
              ctx.fillStyle = r.failed ? "#b91c1c" : "#64748b";
              ctx.font = `${10 * uPlot.pxRatio}px system-ui, sans-serif`;
              ctx.fillText(r.label, l0 + 3 * uPlot.pxRatio, top + 16 * uPlot.pxRatio, l1 - l0 - 6 * uPlot.pxRatio);
              labelled.push({ label: r.label, x: (l0 + 3 * uPlot.pxRatio) / uPlot.pxRatio, maxWidth: (l1 - l0 - 6 * uPlot.pxRatio) / uPlot.pxRatio });
            }
          });
          // Where each label went, in CSS px from the canvas' left: the canvas keeps no text a test could find.
          u.root.dataset.regionLabels = JSON.stringify(labelled);
          ctx.fillStyle = "rgba(245, 158, 11, 0.13)";
          spans(x, warmup, (a, b) => ctx.fillRect(px(a), top, px(b) - px(a), height));
          ctx.fillStyle = "rgba(220, 38, 38, 0.55)";
          spans(x, saturated, (a, b) => ctx.fillRect(px(a), top, Math.max(2, px(b) - px(a)), 5 * uPlot.pxRatio));
          ctx.restore();
        },
      ],
    },
  };
}

/** Plan thresholds as dashed lines with their expression, over the series (red when failed). */
function thresholdLines(get: () => ChartThreshold[] | undefined): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u) => {
          const list = get() ?? [];
          if (list.length === 0) return;
          const { ctx } = u;
          const { left, top, width, height } = u.bbox;
          ctx.save();
          ctx.beginPath();
          ctx.rect(left, top, width, height);
          ctx.clip();
          for (const t of list) {
            const y = Math.round(u.valToPos(t.value, t.axis === "right" ? "y2" : "y", true)) + 0.5;
            if (y < top || y > top + height) continue;
            ctx.strokeStyle = t.ok === false ? "#dc2626" : "#6b7280";
            ctx.fillStyle = ctx.strokeStyle;
            ctx.lineWidth = uPlot.pxRatio;
            ctx.setLineDash([5 * uPlot.pxRatio, 3 * uPlot.pxRatio]);
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + width, y);
            ctx.stroke();
            ctx.setLineDash([]);
            ctx.font = `${10 * uPlot.pxRatio}px system-ui, sans-serif`;
            ctx.textAlign = "right";
            ctx.fillText(t.label, left + width - 4 * uPlot.pxRatio, y - 3 * uPlot.pxRatio);
          }
          ctx.restore();
        },
      ],
    },
  };
}

/** Markers as solid vertical lines with their label at the top, over the series; their places as `data-markers` (canvas text is invisible to tests). */
function markerLines(get: () => ChartMarker[] | undefined): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u) => {
          const list = get() ?? [];
          const { ctx } = u;
          const { left, top, width, height } = u.bbox;
          const placed: { label: string; x: number; y: number; from: number; to: number }[] = [];
          ctx.save();
          ctx.beginPath();
          ctx.rect(left, top, width, height);
          ctx.clip();
          // Labels of changes close together go on rows below each other rather than over each other.
          const rows: { from: number; to: number }[][] = [];
          for (const m of list) {
            const x = Math.round(u.valToPos(m.x, "x", true)) + 0.5;
            if (x < left || x > left + width) continue;
            ctx.strokeStyle = "#7c3aed";
            ctx.fillStyle = "#7c3aed";
            ctx.lineWidth = 1.5 * uPlot.pxRatio;
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            ctx.font = `${10 * uPlot.pxRatio}px system-ui, sans-serif`;
            // Right of the line, or left of it near the chart's right edge.
            const w = ctx.measureText(m.label).width;
            const textX = x + 4 * uPlot.pxRatio + w > left + width ? x - 4 * uPlot.pxRatio - w : x + 4 * uPlot.pxRatio;
            const box = { from: textX - 4 * uPlot.pxRatio, to: textX + w };
            let row = rows.findIndex((r) => r.every((b) => b.to < box.from || b.from > box.to));
            if (row < 0) row = rows.push([]) - 1;
            rows[row]!.push(box);
            const y = top + (28 + 12 * row) * uPlot.pxRatio;
            ctx.fillText(m.label, textX, y);
            placed.push({ label: m.label, x: x / uPlot.pxRatio, y: y / uPlot.pxRatio, from: box.from / uPlot.pxRatio, to: box.to / uPlot.pxRatio });
          }
          ctx.restore();
          u.root.dataset.markers = JSON.stringify(placed);
        },
      ],
    },
  };
}

/**
 * An axis as wide as its widest tick label: a fixed width let long values ("12,000") run under
 * the axis title. uPlot sizes axes over up to three layout passes, and a later pass may pick
 * finer ticks than the first (0, 0.25 … 1 after 0, 1 on an all-zero chart): the size only grows
 * within one layout, so it converges and the widest label of any pass fits.
 */
export const fitAxis: uPlot.Axis.Size = (u, values, axisIdx, cycleNum) => {
  const axis = u.axes[axisIdx]! as uPlot.Axis & { _size?: number };
  u.ctx.font = Array.isArray(axis.font) ? (axis.font[0] as string) : (axis.font ?? AXIS.font);
  const widest = (values ?? []).reduce((w, v) => (v == null ? w : Math.max(w, u.ctx.measureText(String(v)).width)), 0);
  const size = Math.ceil(16 + widest / uPlot.pxRatio);
  return cycleNum > 1 && axis._size ? Math.max(axis._size, size) : size;
};

/**
 * After each draw, what the axes show, on the chart's element (axes are canvas text, which no
 * test can read): `data-y-axes`, the room each y axis has for its tick labels and the width of
 * its widest one (CSS px; a label wider than its room runs under the axis title), and
 * `data-x-range`, the x scale's [min, max].
 */
export function axisFacts(): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u) => {
          const facts = u.axes.flatMap((a) => {
            const axis = a as uPlot.Axis & { _size?: number; _values?: (string | number | null)[]; _show?: boolean };
            if ((axis.side ?? 3) % 2 === 0 || !axis._show) return [];
            const font = Array.isArray(axis.font) ? (axis.font[0] as string) : (axis.font ?? AXIS.font);
            u.ctx.font = font;
            const widest = (axis._values ?? []).reduce<number>((w, v) => (v == null ? w : Math.max(w, u.ctx.measureText(String(v)).width)), 0);
            const tickSize = axis.ticks?.show === false ? 0 : (axis.ticks?.size ?? 10);
            return [{ label: axis.label ?? "", room: (axis._size ?? 0) - tickSize - (axis.gap ?? 5), widest: Math.ceil(widest / uPlot.pxRatio) }];
          });
          u.root.dataset.yAxes = JSON.stringify(facts);
          u.root.dataset.xRange = JSON.stringify([u.scales.x?.min ?? null, u.scales.x?.max ?? null]);
        },
      ],
    },
  };
}

/**
 * The x scale: the data's seconds, or a zoomed span. A run with one measured second (one that
 * errored at once) is drawn over that second: uPlot widens a single x to 0–100, which drew a 2 s
 * run on a 100 s axis.
 */
const xRange: uPlot.Range.Function = (u, min, max) => {
  const xs = u.data[0];
  const first = xs[0];
  if (first != null && xs.length > 0 && xs[xs.length - 1] === first) return [first, first + 1];
  return min === max ? [min - 1, max + 1] : [min, max];
};

function buildOptions(props: TimelineChartProps, width: number, plugins: uPlot.Plugin[], runValues: () => (string | null | undefined)[]): uPlot.Options {
  const hasRight = props.series.some((s) => s.axis === "right");
  const axes: uPlot.Axis[] = [
    { ...AXIS, values: (_u, vals) => vals.map((v) => (props.xAxis ? (Number.isInteger(v) ? props.xAxis.format(v) : "") : `${v}s`)), size: 36 },
    { ...AXIS, scale: "y", label: props.yLabel, size: fitAxis, labelSize: 20, labelGap: 2 },
  ];
  if (hasRight) axes.push({ ...AXIS, scale: "y2", side: 1, label: props.y2Label ?? "", size: fitAxis, labelSize: 20, labelGap: 2, grid: { show: false } });
  return {
    width,
    height: props.height ?? 240,
    scales: {
      x: { time: false, range: xRange },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1] },
      // Headroom on the right axis keeps a flat connections line from hiding under a flat rate line.
      y2: { range: (_u, _min, max) => [0, max > 0 ? max * 1.3 : 1] },
    },
    axes,
    series: [
      // Off the chart, the legend shows the whole run's figures (runValue), not dashes.
      {
        label: props.xAxis?.label ?? "second",
        value: (_u, v) => (v === null ? (props.xAxis?.none ?? "whole run") : props.xAxis ? props.xAxis.format(v) : `${v}s`),
      },
      ...props.series.map<uPlot.Series>((s, i) => ({
        label: s.label,
        stroke: s.color,
        width: s.width ?? 1.75,
        dash: s.dash,
        fill: s.fill,
        show: !s.hidden,
        scale: s.axis === "right" ? "y2" : "y",
        spanGaps: s.spanGaps ?? false,
        // Points where a value stands alone (between gaps) or there are too few to draw a line.
        points: { show: (u: uPlot) => (u.data[0]?.length ?? 0) < 3 || s.spanGaps === true },
        value: (_u: uPlot, v: number | null, _si: number, idx: number | null) => (idx === null ? (runValues()[i] ?? s.format(v)) : s.format(v)),
      })),
    ],
    bands: (props.bands ?? []).flatMap((b) => {
      const hi = props.series.findIndex((s) => s.label === b.upper);
      const lo = props.series.findIndex((s) => s.label === b.lower);
      return hi < 0 || lo < 0 ? [] : [{ series: [hi + 1, lo + 1] as [number, number], fill: b.fill }];
    }),
    legend: { live: true },
    cursor: { drag: { x: true, y: false }, points: { size: 6 }, ...(props.syncKey ? { sync: { key: props.syncKey } } : {}) },
    plugins,
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
  // The props the chart last drew: the effects below skip a setData and a redraw of what it was
  // just created with (each a full draw of every series: three per chart on a page's first paint).
  const drawn = useRef<TimelineChartProps | null>(null);
  const latest = useRef(props);
  latest.current = props;
  const shape = `${props.series.map((s) => `${s.label}:${s.axis ?? "left"}`).join("|")}|${props.height ?? 240}|${(props.bands ?? []).length}|${props.syncKey ?? ""}`;
  const runValues = props.series.map((s) => s.runValue ?? "").join("|");

  // biome-ignore lint/correctness/useExhaustiveDependencies: rebuilt only when the chart's shape changes; it reads the current props through `latest`.
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const plugins = [
      intervalMarks(() => latest.current),
      thresholdLines(() => latest.current.thresholds),
      markerLines(() => latest.current.markers),
      axisFacts(),
    ];
    const u = new uPlot(
      buildOptions(latest.current, Math.max(200, el.clientWidth), plugins, () => latest.current.series.map((s) => s.runValue)),
      toData(latest.current),
      el,
    );
    plot.current = u;
    drawn.current = latest.current;
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
    const d = drawn.current;
    if (d && d.x === props.x && d.series === props.series) return;
    plot.current?.setData(toData(latest.current));
    drawn.current = latest.current;
  }, [props.x, props.series]);
  useEffect(() => {
    const d = drawn.current;
    if (
      d &&
      d.regions === props.regions &&
      d.warmup === props.warmup &&
      d.saturated === props.saturated &&
      d.thresholds === props.thresholds &&
      d.markers === props.markers
    )
      return;
    plot.current?.redraw(false, false);
    drawn.current = latest.current;
  }, [props.regions, props.warmup, props.saturated, props.thresholds, props.markers]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the run figures the legend shows changed.
  useEffect(() => {
    // New run figures while the cursor is off the chart: refresh the legend that shows them.
    const u = plot.current;
    if (u && u.cursor.idx == null) u.setLegend({ idx: null as unknown as number });
  }, [runValues]);

  return <div ref={ref} className="chart" />;
}
