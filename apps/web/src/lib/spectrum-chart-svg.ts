import type { SpectrumPoint } from "@volley/contracts";
import { fmtMs, fmtRateValue } from "./format";
import { decades, fmtPercentile, msAt, percentileX, spectrumKinds } from "./spectrum-axis";
import { escapeHtml as e, svgChart } from "./svg-chart";

/**
 * The percentile spectrum as one inline SVG with its key, the run page's PercentileSpectrum drawn
 * once: each timed kind's merged histogram, log x (percentile: 90, 99, 99.9 % a decade apart),
 * linear ms; the key reads each kind's p99. Kinds the page hides until clicked are left out. Empty
 * without samples.
 */
export function spectrumChartSvg(spectra: Record<string, SpectrumPoint[]>): string {
  const kinds = spectrumKinds(spectra).filter((k) => !k.hidden);
  if (kinds.length === 0) return "";
  const series = kinds.map((k) => {
    const points = spectra[k.metric]!;
    const total = points.at(-1)!.count;
    return { label: k.label, color: k.color, x: points.map((p) => percentileX(p.percentile, total)), values: points.map((p) => p.ms) };
  });
  const xmax = Math.max(...series.map((s) => s.x.at(-1)!));
  const svg = svgChart({
    width: 900,
    height: 260,
    axes: true,
    title: "Percentile spectrum (ms)",
    series,
    xLog: true,
    xTicks: decades(1, xmax),
    xFormat: fmtPercentile,
    format: (v) => `${fmtRateValue(v)} ms`,
  });
  const key = kinds
    .map((k, i) => `<span><i style="background:${series[i]!.color}"></i>${e(k.label)}: p99 <b>${e(fmtMs(msAt(spectra[k.metric]!, 99)))}</b></span>`)
    .join("");
  return `<div class="chart" data-chart="spectrum">${svg}</div><div class="legend">${key}</div>`;
}
