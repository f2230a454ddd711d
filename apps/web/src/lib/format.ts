/** Display formatting shared by server and client components. Pure; no locale surprises (en-US digits). */

const intFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export const DASH = "—";

export function fmtInt(n: number | null | undefined): string {
  return n === null || n === undefined ? DASH : intFmt.format(n);
}

/** Milliseconds with precision that fits the magnitude: 0.412, 3.27, 48.1, 1,204. */
export function fmtMsValue(v: number | null | undefined): string {
  if (v === null || v === undefined) return DASH;
  if (v < 1) return v.toFixed(3);
  if (v < 10) return v.toFixed(2);
  if (v < 100) return v.toFixed(1);
  return intFmt.format(Math.round(v));
}

export function fmtMs(v: number | null | undefined): string {
  const s = fmtMsValue(v);
  return s === DASH ? s : `${s} ms`;
}

/** A rate's number alone, for columns whose header names the unit: "5,500", "12.5", "0.05" (never "0" for a rate above zero). */
export function fmtRateValue(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return DASH;
  if (v >= 100) return intFmt.format(Math.round(v));
  if (v >= 1 || v === 0) return (Math.round(v * 10) / 10).toString();
  return Number(v.toPrecision(2)).toString();
}

/** "5,500/s", "12.5/s", "0.05/s". */
export function fmtRate(v: number | null | undefined): string {
  const s = fmtRateValue(v);
  return s === DASH ? s : `${s}/s`;
}

/** A planned message rate: "1,700 msg/s", "2.5 msg/s", and below one a second "1 msg every 3 s" (never "0 msg/s"). */
export function fmtMsgRate(rate: number): string {
  if (rate >= 100) return `${intFmt.format(Math.round(rate))} msg/s`;
  if (rate >= 1) return `${Math.round(rate * 10) / 10} msg/s`;
  const every = 1 / rate;
  return `1 msg every ${every >= 10 ? Math.round(every) : Math.round(every * 10) / 10} s`;
}

export function fmtPercent(v: number | null | undefined, digits = 1): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return DASH;
  return `${v.toFixed(digits)}%`;
}

/** 850 ms, 12.3 s, 4 m 05 s, 1 h 02 m. */
export function fmtDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return DASH;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${String(Math.round(s % 60)).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} m`;
}

export function durationBetween(from: string | null, to: string | null, now = Date.now()): number | null {
  if (!from) return null;
  const end = to ? Date.parse(to) : now;
  return end - Date.parse(from);
}

const pad = (n: number) => String(n).padStart(2, "0");

/** Local date and time, 2025-11-22 14:03:09. */
export function fmtDateTime(iso: string | null): string {
  if (!iso) return DASH;
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "just now", "5 s ago", "3 min ago", "2 h ago", then the date. */
export function fmtRelative(iso: string, now = Date.now()): string {
  const diff = Math.max(0, now - Date.parse(iso)) / 1000;
  if (diff < 5) return "just now";
  if (diff < 60) return `${Math.round(diff)} s ago`;
  if (diff < 3600) return `${Math.round(diff / 60)} min ago`;
  if (diff < 86_400) return `${Math.round(diff / 3600)} h ago`;
  return fmtDateTime(iso).slice(0, 16);
}
