import type { Run } from "@volley/contracts";
import { fmtMs, fmtRateValue } from "./format";
import { escapeHtml as e, svgChart } from "./svg-chart";
import { CURVE_X_LABEL, defaultCurveX, defaultPercentile, linesOnScale, referenceLines, sweepCurves } from "./sweep-curves";

/**
 * A sweep's latency-vs-messages/s chart as one inline SVG with its key, as the run page's
 * SweepChart first shows it (the same curves, x, percentile and stop-rule line from sweep-curves):
 * a dot per step, hollow where it failed, was cut short or the agent limited it, the capacity step
 * (or, without a stop rule, the knee) ringed. Empty when the run has no steps.
 */
export function sweepChartSvg(run: Run): string {
  const x = defaultCurveX([run]);
  const percentile = defaultPercentile([run]);
  const curves = sweepCurves([run], x, percentile);
  if (curves.length === 0) return "";
  const { drawn, above, highest } = linesOnScale(referenceLines([run], percentile), curves, false);
  const outcome = (s: (typeof curves)[number]["points"][number]["step"]) =>
    s.generatorLimited ? "agent-limited, not judged" : s.failed ? "broke the stop rule" : s.aborted ? "cut short" : "held";
  const svg = svgChart({
    width: 900,
    height: 300,
    axes: true,
    title: `Latency ${percentile} (ms) vs ${CURVE_X_LABEL[x]}`,
    series: curves.map((c) => ({
      label: c.label,
      color: c.color,
      x: c.points.map((p) => p.x),
      values: c.points.map((p) => p.y),
      markers: c.points.map((p, i) => ({
        title: `step ${p.step.index + 1}: ${fmtRateValue(p.x)} ${CURVE_X_LABEL[x]}, ${percentile} ${fmtMs(p.y)}, ${outcome(p.step)}`,
        hollow: p.hollow,
        ring: c.capacity === i || c.knee === i,
      })),
    })),
    thresholds: drawn.map((l) => ({ value: l.ms, label: l.label })),
    format: (v) => `${fmtRateValue(v)} ms`,
    xFormat: (v) => fmtRateValue(v),
  });
  const ring = curves.some((c) => c.capacity !== null)
    ? "capacity (the highest step that met the stop rule)"
    : curves.some((c) => c.knee !== null)
      ? "knee"
      : null;
  const key = [
    `<span>x: ${e(CURVE_X_LABEL[x])}, y: latency ${e(percentile)} (ms)</span>`,
    "<span>● held</span>",
    "<span>○ failed, cut short or agent-limited</span>",
    ...(ring ? [`<span>◎ ${e(ring)}</span>`] : []),
    ...above.map((l) => `<span>${e(l.label)}: above this chart, whose highest step is ${e(fmtMs(highest))}</span>`),
  ].join("");
  return `<div class="chart" data-chart="sweep">${svg}</div><div class="legend">${key}</div>`;
}
