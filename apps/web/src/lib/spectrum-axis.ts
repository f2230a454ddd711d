import { HISTOGRAMS, type SpectrumPoint } from "@volley/contracts";

/** One line of a percentile spectrum: a timed kind (histogram) and how it is drawn. */
export interface SpectrumKind {
  metric: string;
  label: string;
  color: string;
  /** Drawn only once its legend entry is clicked (the report leaves it out). */
  hidden?: boolean;
}

const KINDS: SpectrumKind[] = [
  { metric: HISTOGRAMS.messageLatency, label: "round trip", color: "#2563eb" },
  { metric: HISTOGRAMS.deliveryLatency, label: "delivery", color: "#16a34a" },
  { metric: HISTOGRAMS.connect, label: "connect", color: "#7c3aed" },
  { metric: HISTOGRAMS.wsConnect, label: "connect", color: "#7c3aed" },
  { metric: HISTOGRAMS.sendLag, label: "send lag", color: "#be123c" },
  { metric: HISTOGRAMS.firstMessage, label: "first message", color: "#6b7280" },
];

/**
 * Whole user lifetimes (arrival to leaving, think times included) and reconnect waits run to
 * seconds: on one ms axis beside round trips of a few ms they flattened every other line onto
 * zero. They stay in the legend, hidden until clicked.
 */
const LONG: Record<string, string> = { [HISTOGRAMS.userTime]: "user time", [HISTOGRAMS.reconnectTime]: "reconnect" };

/** The spectrum's lines: the known kinds first, in their order, then any other timed kind in grey; empty ones left out. */
export function spectrumKinds(spectra: Record<string, SpectrumPoint[]>): SpectrumKind[] {
  const has = (m: string) => (spectra[m]?.length ?? 0) > 0;
  return [
    ...KINDS.filter((k) => has(k.metric)),
    ...Object.keys(spectra)
      .filter((m) => has(m) && !KINDS.some((k) => k.metric === m))
      .map((m) => ({ metric: m, label: LONG[m] ?? m, color: "#6b7280", ...(m in LONG ? { hidden: true } : {}) })),
  ];
}

/** x = 1/(1−p): the HdrHistogram plot's axis, where 90, 99 and 99.9 sit a decade apart. */
export const percentileX = (p: number, total: number) => (p >= 100 ? Math.max(total, 10) : 1 / (1 - p / 100));

/** An x of that axis as its percentile: "0%", "90%", "99.9%". */
export const fmtPercentile = (x: number) => {
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
