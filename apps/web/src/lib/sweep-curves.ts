import { durationMs, type LatencySummary, type Run, type SweepStep } from "@volley/contracts";

export type CurveX = "delivery" | "sent" | "received" | "users";
export type CurvePercentile = "p50" | "p90" | "p95" | "p99" | "max";

export interface CurvePoint {
  x: number;
  y: number | null;
  /** Failed, cut-short and generator-limited steps are drawn hollow, never dropped. */
  hollow: boolean;
  saturated: boolean;
  step: SweepStep;
}

export interface Curve {
  key: string;
  label: string;
  color: string;
  points: CurvePoint[];
  /**
   * Index into points of the run's capacity step (summary.capacity: the highest step that met the
   * stop rule, the same number the headline shows), or null. With a stop rule this is the curve's
   * one marked point: the knee is not drawn beside it, so two "limits" cannot disagree.
   */
  capacity: number | null;
  /** Without a stop rule only: index into points of the knee (where latency turns up, from the curve's shape), or null. */
  knee: number | null;
}

/** A stop rule's latency limit, drawn as a horizontal line when its percentile is the one shown. */
export interface ReferenceLine {
  ms: number;
  label: string;
}

const RULE_PERCENTILES = ["p95", "p99", "p50", "max"] as const;
const stopWhenOf = (run: Run) => run.plan.sweep?.stopWhen;

/**
 * The percentile the curve shows first: the one the (first) run's stop rule judges, so the line it
 * is judged against is on the chart; p95 without a rule. A rule with several (max: 5s, p95: 200ms)
 * shows its p95, else p99, p50, max.
 */
export function defaultPercentile(runs: Run[]): CurvePercentile {
  for (const run of runs) {
    const rule = stopWhenOf(run);
    const p = rule && RULE_PERCENTILES.find((k) => rule[k] !== undefined);
    if (p) return p;
  }
  return "p95";
}

/** The stop rules' own limits on `percentile` (one line per distinct limit), none when no rule limits it. */
export function referenceLines(runs: Run[], percentile: CurvePercentile): ReferenceLine[] {
  const lines = new Map<number, ReferenceLine>();
  if (percentile === "p90") return [];
  for (const run of runs) {
    const limit = stopWhenOf(run)?.[percentile];
    if (limit === undefined) continue;
    const ms = durationMs(limit);
    lines.set(ms, { ms, label: `stop rule: ${percentile} ≤ ${ms} ms` });
  }
  return [...lines.values()].sort((a, b) => a.ms - b.ms);
}

/** A limit this many times the curves' highest point would flatten them to the axis on a linear scale. */
const OFF_SCALE_FACTOR = 5;

/**
 * Which reference lines a linear chart draws, and which it only names: a stop rule far above every
 * step (200 ms over a curve topping out at 3 ms) would stretch the y axis until the curve is a flat
 * line at zero, hiding the shape the chart is for. On a log scale every line fits.
 */
export function linesOnScale(
  lines: ReferenceLine[],
  curves: Curve[],
  log: boolean,
): { drawn: ReferenceLine[]; above: ReferenceLine[]; highest: number | null } {
  const ys = curves.flatMap((c) => c.points.flatMap((p) => (p.y === null ? [] : [p.y])));
  const highest = ys.length > 0 ? Math.max(...ys) : null;
  if (log || highest === null || highest <= 0) return { drawn: lines, above: [], highest };
  return {
    drawn: lines.filter((l) => l.ms <= highest * OFF_SCALE_FACTOR),
    above: lines.filter((l) => l.ms > highest * OFF_SCALE_FACTOR),
    highest,
  };
}

/**
 * The x a curve shows first: users arriving per second for a users sweep, deliveries/s when a run
 * fans out (broadcast, groups), else sent/s (echo has no deliveries).
 */
export function defaultCurveX(runs: Run[]): CurveX {
  if (runs.some((r) => r.summary?.steps?.some((s) => s.users))) return "users";
  return runs.some((r) => r.summary?.steps?.some((s) => s.deliveryRate > 0)) ? "delivery" : "sent";
}

export const CURVE_X_LABEL: Record<CurveX, string> = { delivery: "deliveries/s", sent: "sent/s", received: "received/s", users: "users started/s" };

export const CURVE_COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#d97706", "#0891b2", "#be123c", "#4d7c0f", "#6b7280", "#c026d3"];

/** A users step's x is its achieved arrivals: users started per second of its hold. */
export const xOf = (s: SweepStep, x: CurveX) =>
  x === "users"
    ? s.users && s.seconds > 0
      ? Math.round((100 * s.users.started) / s.seconds) / 100
      : 0
    : x === "delivery"
      ? s.deliveryRate
      : x === "sent"
        ? s.sendRate
        : s.receiveRate;

/** Which latency a step's point shows: delivery latency when the scenario delivers (broadcast, groups), else the round trip. */
export function stepLatency(s: SweepStep): LatencySummary {
  return s.delivery.count > 0 ? s.delivery : s.latency;
}

/**
 * The knee of a latency-vs-rate curve (Kneedle, for a convex increasing curve): with both axes
 * scaled to [0, 1], the point farthest below the straight line from the first point to the last —
 * where latency stops being flat and starts to climb. Needs three points; null when the curve never
 * bends upward (latency flat, or falling).
 */
export function findKnee(points: { x: number; y: number | null }[]): number | null {
  const pts = points.map((p, i) => ({ ...p, i })).filter((p): p is { x: number; y: number; i: number } => p.y !== null && Number.isFinite(p.x));
  if (pts.length < 3) return null;
  const xs = pts.map((p) => p.x);
  const ys = pts.map((p) => p.y);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  if (x1 === x0 || y1 === y0) return null;
  const first = pts[0]!;
  const last = pts.at(-1)!;
  if (last.y <= first.y) return null;
  const nx = (x: number) => (x - x0) / (x1 - x0);
  const ny = (y: number) => (y - y0) / (y1 - y0);
  let best: { i: number; d: number } | null = null;
  for (const p of pts.slice(1, -1)) {
    // Vertical distance below the chord from the first to the last point, in the scaled space.
    const t = (nx(p.x) - nx(first.x)) / (nx(last.x) - nx(first.x) || 1);
    const chord = ny(first.y) + t * (ny(last.y) - ny(first.y));
    const d = chord - ny(p.y);
    if (d > 0.05 && (!best || d > best.d)) best = { i: p.i, d };
  }
  return best?.i ?? null;
}

/** Linear interpolation of a curve at x, for the crosshair: null outside its measured range. */
export function valueAt(points: { x: number; y: number | null }[], x: number): number | null {
  const pts = points.filter((p): p is { x: number; y: number } => p.y !== null).sort((a, b) => a.x - b.x);
  if (pts.length === 0 || x < pts[0]!.x || x > pts.at(-1)!.x) return null;
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1]!;
    const b = pts[i]!;
    if (x <= b.x) return b.x === a.x ? b.y : a.y + ((x - a.x) / (b.x - a.x)) * (b.y - a.y);
  }
  return pts.at(-1)!.y;
}

/** One curve per run (× its concurrency), from the summary's sweep steps. Runs without steps give no curve. */
export function sweepCurves(runs: Run[], x: CurveX, percentile: CurvePercentile): Curve[] {
  return runs.flatMap((run, n) => {
    const steps = run.summary?.steps ?? [];
    if (steps.length === 0) return [];
    const points = steps
      .map((s) => ({ x: xOf(s, x), y: stepLatency(s)[percentile], hollow: s.failed || s.aborted || !!s.generatorLimited, saturated: s.saturated, step: s }))
      .sort((a, b) => a.x - b.x);
    const capacityStep = run.summary?.capacity?.step ?? null;
    const capacity = capacityStep === null ? -1 : points.findIndex((p) => p.step.index === capacityStep);
    const ruled = stopWhenOf(run) !== undefined;
    return [
      {
        key: run.id,
        label: `${run.name} · C=${run.plan.connections.count}`,
        color: CURVE_COLORS[n % CURVE_COLORS.length]!,
        points,
        capacity: capacity >= 0 ? capacity : null,
        knee: ruled ? null : findKnee(points),
      },
    ];
  });
}
