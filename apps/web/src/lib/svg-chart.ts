/** Text for HTML and SVG: the five characters that could end an attribute or open a tag. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

export interface SvgSeries {
  label: string;
  values: (number | null)[];
  color: string;
  dash?: string;
  /** This series' own x values (a percentile spectrum's kinds differ); default the chart's. */
  x?: number[];
  /** A dot per value where set: hollow (failed, cut short), ringed (the capacity step), named by `title`. */
  markers?: (SvgMarker | null)[];
}

export interface SvgMarker {
  title: string;
  hollow?: boolean;
  ring?: boolean;
}

/** A span of x shaded behind the lines (a stage, a sweep step, warm-up); `top`: only a strip along the top (saturated seconds). */
export interface SvgBand {
  from: number;
  to: number;
  fill: string;
  label?: string;
  top?: boolean;
}

export interface SvgThreshold {
  value: number;
  label: string;
  /** Failed thresholds are drawn red, passed ones grey. */
  ok?: boolean;
}

export interface SvgChartOptions {
  width: number;
  height: number;
  /** x of each value (seconds since the start); default 0, 1, 2… */
  x?: number[];
  series: SvgSeries[];
  thresholds?: SvgThreshold[];
  /** Axes with tick labels and a legend (the report); off, a bare sparkline (the cards). */
  axes?: boolean;
  /** y tick label (axes only). */
  format?: (v: number) => string;
  /** x tick label (axes only); default seconds, "12s". */
  xFormat?: (v: number) => string;
  /** x ticks to label (axes only); default round steps. */
  xTicks?: number[];
  /** x on a log scale (a percentile spectrum's 1/(1−p)); every x must be positive. */
  xLog?: boolean;
  bands?: SvgBand[];
  /** Accessible name. */
  title: string;
}

const num = (v: number) => (Math.round(v * 10) / 10).toString();

/** A round step giving about `n` ticks up to `max`: 1, 2 or 5 × 10^k. */
function tickStep(max: number, n: number): number {
  const raw = max / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
}

/**
 * A line chart as one self-contained SVG string: lines broken where a value is missing, each
 * threshold a dashed horizontal line with its expression, y from 0. No script and no fonts to
 * fetch, so it renders the same in the page, in a saved report opened offline, and on paper.
 */
export function svgChart(o: SvgChartOptions): string {
  const { width: w, height: h } = o;
  const xsOf = (s: SvgSeries) => s.x ?? o.x ?? s.values.map((_, i) => i);
  const pad = o.axes ? { l: 56, r: 12, t: 10, b: 24 } : { l: 1, r: 1, t: 4, b: 2 };
  const values = o.series.flatMap((s) => s.values).filter((v): v is number => v !== null && Number.isFinite(v));
  const top = Math.max(0, ...values, ...(o.thresholds ?? []).map((t) => t.value)) * 1.1 || 1;
  // x ascends within a series; with several x arrays, the span covers them all.
  const ends = o.series.flatMap((s) => {
    const sx = xsOf(s);
    return sx.length > 0 ? [sx[0]!, sx.at(-1)!] : [];
  });
  const x0 = ends.length > 0 ? Math.min(...ends) : 0;
  const x1 = ends.length > 0 ? Math.max(...ends) : 1;
  const scale = o.xLog ? (x: number) => Math.log10(x) : (x: number) => x;
  const px = (x: number) => pad.l + ((scale(x) - scale(x0)) / (scale(x1) - scale(x0) || 1)) * (w - pad.l - pad.r);
  const py = (y: number) => h - pad.b - (y / top) * (h - pad.t - pad.b);
  const parts: string[] = [`<title>${escapeHtml(o.title)}</title>`];
  for (const b of o.bands ?? []) {
    const [l, r] = [Math.max(pad.l, px(b.from)), Math.min(w - pad.r, px(b.to))];
    if (r <= l) continue;
    const [y, bh] = b.top ? [pad.t, 4] : [pad.t, h - pad.t - pad.b];
    parts.push(`<rect x="${num(l)}" y="${y}" width="${num(r - l)}" height="${bh}" fill="${b.fill}" stroke="none"/>`);
    if (b.label && o.axes) parts.push(`<text x="${num(l + 3)}" y="${pad.t + 11}" font-size="10" fill="#6b7280">${escapeHtml(b.label)}</text>`);
  }

  if (o.axes) {
    const fmt = o.format ?? num;
    const step = tickStep(top, 4);
    for (let y = 0; y <= top; y += step) {
      parts.push(`<line x1="${pad.l}" x2="${w - pad.r}" y1="${num(py(y))}" y2="${num(py(y))}" stroke="#eceef2"/>`);
      parts.push(`<text x="${pad.l - 6}" y="${num(py(y) + 4)}" text-anchor="end" font-size="11" fill="#4b5563">${escapeHtml(fmt(y))}</text>`);
    }
    const xfmt = o.xFormat ?? ((x: number) => `${num(x)}s`);
    const xstep = tickStep(Math.max(1, x1 - x0), 8);
    const xticks: number[] = o.xTicks ?? [];
    if (!o.xTicks) for (let x = Math.ceil(x0 / xstep) * xstep; x <= x1; x += xstep) xticks.push(x);
    for (const x of xticks) {
      parts.push(`<text x="${num(px(x))}" y="${h - 6}" text-anchor="middle" font-size="11" fill="#4b5563">${escapeHtml(xfmt(x))}</text>`);
    }
    parts.push(`<line x1="${pad.l}" x2="${w - pad.r}" y1="${h - pad.b}" y2="${h - pad.b}" stroke="#9ca3af"/>`);
  }

  for (const s of o.series) {
    const sx = xsOf(s);
    // An hour is 3,600 values on a 220-unit card: every half unit of x keeps its first, lowest,
    // highest and last value (the same picture), instead of a path of 3,600 segments per card in
    // the page's HTML and in the browser's path parsing and painting.
    let d = "";
    let pen = false;
    let column = Number.NaN;
    // Indexes of the current column's first, lowest, highest and last value.
    let first = -1;
    let lo = -1;
    let hi = -1;
    let last = -1;
    const flush = () => {
      if (first < 0) return;
      for (const i of [...new Set([first, lo, hi, last])].sort((a, b) => a - b)) {
        d += `${pen ? "L" : "M"}${num(px(sx[i] ?? i))} ${num(py(s.values[i]!))}`;
        pen = true;
      }
      first = -1;
    };
    s.values.forEach((v, i) => {
      if (v === null || !Number.isFinite(v)) {
        flush();
        pen = false;
        column = Number.NaN;
        return;
      }
      const c = Math.round(px(sx[i] ?? i) * 2);
      if (c !== column || first < 0) {
        flush();
        column = c;
        first = lo = hi = last = i;
        return;
      }
      if (v < s.values[lo]!) lo = i;
      if (v > s.values[hi]!) hi = i;
      last = i;
    });
    flush();
    // A lone value between gaps would be an invisible zero-length path: draw it as a dot.
    const dots = s.values
      .map((v, i) =>
        v !== null && (s.values[i - 1] ?? null) === null && (s.values[i + 1] ?? null) === null
          ? `<circle cx="${num(px(sx[i] ?? i))}" cy="${num(py(v))}" r="1.8" fill="${s.color}"/>`
          : "",
      )
      .join("");
    const markers = (s.markers ?? [])
      .map((m, i) => {
        const v = s.values[i];
        if (!m || v === null || v === undefined || !Number.isFinite(v)) return "";
        const [cx, cy] = [num(px(sx[i] ?? i)), num(py(v))];
        const dot = `<circle cx="${cx}" cy="${cy}" r="3.5" fill="${m.hollow ? "#fff" : s.color}" stroke="${s.color}" stroke-width="1.6" data-point="${escapeHtml(m.title)}"><title>${escapeHtml(m.title)}</title></circle>`;
        return m.ring ? `${dot}<circle cx="${cx}" cy="${cy}" r="7.5" fill="none" stroke="#111827" stroke-width="1.3"/>` : dot;
      })
      .join("");
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.6"${s.dash ? ` stroke-dasharray="${s.dash}"` : ""} stroke-linejoin="round"/>${dots}${markers}`,
    );
  }

  for (const t of o.thresholds ?? []) {
    const y = num(py(t.value));
    const color = t.ok === false ? "#dc2626" : "#6b7280";
    parts.push(
      `<line x1="${pad.l}" x2="${w - pad.r}" y1="${y}" y2="${y}" stroke="${color}" stroke-width="1" stroke-dasharray="5 3" data-threshold="${escapeHtml(t.label)}"/>`,
    );
    if (o.axes)
      parts.push(`<text x="${w - pad.r - 4}" y="${num(py(t.value) - 4)}" text-anchor="end" font-size="11" fill="${color}">${escapeHtml(t.label)}</text>`);
  }

  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${escapeHtml(o.title)}" font-family="system-ui, sans-serif">${parts.join("")}</svg>`;
}
