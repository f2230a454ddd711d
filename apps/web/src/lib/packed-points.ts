import type { IntervalPoint } from "@volley/contracts";

type Num = number | null;

/**
 * A timeline as columns, for the run page's server-rendered payload: an hour is 3,600 points, and
 * as objects their keys were most of the payload's 1.3 MB (embedded in the HTML as an escaped
 * string, then parsed into 3,600 objects before the charts could start). Columns of numbers are
 * about a third of that and parse as flat arrays. Booleans are 0/1; an absent optional field
 * (stage, step, delivery) is null in its column, and a column no point has is left out. The page
 * passes it as one JSON string (packedPointsJson): React's payload parser then walks one string,
 * not 60,000 numbers, and the browser's JSON.parse reads the columns.
 */
export interface PackedPoints {
  n: number;
  /** Each point's index less the one before (the first: itself); mostly 1. */
  index: number[];
  /** The first point's t less 1000 × its index. */
  t0: number;
  /** Each point's t less t0 + 1000 × its index: mostly 0 (the hub stamps seconds on that grid). */
  t: number[];
  warmup: number[];
  saturated: number[];
  connections: number[];
  sent: number[];
  received: number[];
  errors: number[];
  lost: number[];
  disconnects: number[];
  connectFailed: number[];
  cpu: number[];
  eventLoopMs: number[];
  sendLagMs: number[];
  agents: number[];
  p50: Num[];
  p95: Num[];
  p99: Num[];
  max: Num[];
  stage?: Num[];
  step?: Num[];
  delivery?: { received: Num[]; lost: Num[]; p50: Num[]; p95: Num[]; p99: Num[] };
}

export function packPoints(points: IntervalPoint[]): PackedPoints {
  const t0 = points.length === 0 ? 0 : points[0]!.t - 1000 * points[0]!.index;
  const col = <T>(f: (p: IntervalPoint) => T) => points.map(f);
  const packed: PackedPoints = {
    n: points.length,
    index: points.map((p, i) => p.index - (i === 0 ? 0 : points[i - 1]!.index)),
    t0,
    t: col((p) => p.t - t0 - 1000 * p.index),
    warmup: col((p) => (p.warmup ? 1 : 0)),
    saturated: col((p) => (p.saturated ? 1 : 0)),
    connections: col((p) => p.connections),
    sent: col((p) => p.sent),
    received: col((p) => p.received),
    errors: col((p) => p.errors),
    lost: col((p) => p.lost),
    disconnects: col((p) => p.disconnects),
    connectFailed: col((p) => p.connectFailed),
    cpu: col((p) => p.health.cpu),
    eventLoopMs: col((p) => p.health.eventLoopMs),
    sendLagMs: col((p) => p.health.sendLagMs),
    agents: col((p) => p.health.agents),
    p50: col((p) => p.p50),
    p95: col((p) => p.p95),
    p99: col((p) => p.p99),
    max: col((p) => p.max),
  };
  if (points.some((p) => p.stage !== undefined)) packed.stage = col((p) => p.stage ?? null);
  if (points.some((p) => p.step !== undefined)) packed.step = col((p) => p.step ?? null);
  if (points.some((p) => p.delivery !== undefined)) {
    packed.delivery = {
      received: col((p) => p.delivery?.received ?? null),
      lost: col((p) => p.delivery?.lost ?? null),
      p50: col((p) => p.delivery?.p50 ?? null),
      p95: col((p) => p.delivery?.p95 ?? null),
      p99: col((p) => p.delivery?.p99 ?? null),
    };
  }
  return packed;
}

export function unpackPoints(c: PackedPoints): IntervalPoint[] {
  const out: IntervalPoint[] = new Array(c.n);
  let index = 0;
  for (let i = 0; i < c.n; i++) {
    index += c.index[i]!;
    const p: IntervalPoint = {
      index,
      t: c.t0 + 1000 * index + c.t[i]!,
      warmup: c.warmup[i] === 1,
      saturated: c.saturated[i] === 1,
      connections: c.connections[i]!,
      sent: c.sent[i]!,
      received: c.received[i]!,
      errors: c.errors[i]!,
      lost: c.lost[i]!,
      disconnects: c.disconnects[i]!,
      connectFailed: c.connectFailed[i]!,
      health: { cpu: c.cpu[i]!, eventLoopMs: c.eventLoopMs[i]!, sendLagMs: c.sendLagMs[i]!, agents: c.agents[i]! },
      p50: c.p50[i]!,
      p95: c.p95[i]!,
      p99: c.p99[i]!,
      max: c.max[i]!,
    };
    const stage = c.stage?.[i];
    if (stage != null) p.stage = stage;
    const step = c.step?.[i];
    if (step != null) p.step = step;
    const d = c.delivery;
    if (d && d.received[i] != null) p.delivery = { received: d.received[i]!, lost: d.lost[i]!, p50: d.p50[i]!, p95: d.p95[i]!, p99: d.p99[i]! };
    out[i] = p;
  }
  return out;
}

/** The packed timeline as the one string a server component hands the run page. */
export const packedPointsJson = (points: IntervalPoint[]): string => JSON.stringify(packPoints(points));
