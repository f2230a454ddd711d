import {
  COUNTERS,
  ERROR_PREFIX,
  GAUGES,
  HISTOGRAMS,
  type IntervalFrame,
  type IntervalPoint,
  type RunSummary,
} from "@volley/contracts";
import { createHistogram, decodeHistogram, type Histogram } from "./histogram";
import { latencySummary } from "./summary";

/** The parts of a stored frame aggregation needs (the db row shape is a superset). */
export type FrameLike = Pick<IntervalFrame, "index" | "startedAt" | "durationMs" | "warmup" | "counters" | "histograms" | "health">;

const ms = (us: number) => Math.round(us) / 1000;

function addInto(target: Map<string, Histogram>, histograms: Record<string, string>) {
  for (const [name, b64] of Object.entries(histograms)) {
    let h = target.get(name);
    if (!h) {
      h = createHistogram(64);
      target.set(name, h);
    }
    h.add(decodeHistogram(b64));
  }
}

function errorTotal(counters: Record<string, number>): number {
  let n = 0;
  for (const [k, v] of Object.entries(counters)) if (k.startsWith(ERROR_PREFIX)) n += v;
  return n;
}

/** One timeline point per interval index, every shard's frame for that second merged exactly. */
export function mergeTimeline(frames: readonly FrameLike[]): IntervalPoint[] {
  const byIndex = new Map<number, FrameLike[]>();
  for (const f of frames) {
    const list = byIndex.get(f.index);
    if (list) list.push(f);
    else byIndex.set(f.index, [f]);
  }
  return [...byIndex.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, group]) => {
      const hs = new Map<string, Histogram>();
      let sent = 0, received = 0, errors = 0, connections = 0;
      for (const f of group) {
        addInto(hs, f.histograms);
        sent += f.counters[COUNTERS.sent] ?? 0;
        received += f.counters[COUNTERS.received] ?? 0;
        connections += f.counters[COUNTERS.connectionsActive] ?? 0;
        errors += errorTotal(f.counters);
      }
      const lat = hs.get(HISTOGRAMS.messageLatency);
      const has = lat !== undefined && lat.totalCount > 0;
      return {
        index,
        t: Math.min(...group.map((f) => f.startedAt)),
        warmup: group.every((f) => f.warmup),
        saturated: group.some((f) => f.health.saturated),
        connections,
        sent,
        received,
        errors,
        p50: has ? ms(lat.getValueAtPercentile(50)) : null,
        p95: has ? ms(lat.getValueAtPercentile(95)) : null,
        p99: has ? ms(lat.getValueAtPercentile(99)) : null,
        max: has ? ms(lat.maxValue) : null,
      };
    });
}

/**
 * The run summary from every shard's frames: counters summed, histograms merged with add() (never
 * averaged percentiles). Warm-up intervals are left out of rates and percentiles but not of totals
 * of errors and connections, which must never be hidden.
 */
export function summarizeFrames(frames: readonly FrameLike[]): Omit<RunSummary, "thresholds"> {
  const measured = frames.filter((f) => !f.warmup);
  const hs = new Map<string, Histogram>();
  for (const f of measured) addInto(hs, f.histograms);
  const connectHs = new Map<string, Histogram>();
  for (const f of frames) {
    const connect = f.histograms[HISTOGRAMS.wsConnect];
    if (connect) addInto(connectHs, { [HISTOGRAMS.wsConnect]: connect });
  }

  const sum = (list: readonly FrameLike[], name: string) => {
    if (GAUGES.includes(name)) throw new Error(`${name} is a gauge`);
    return list.reduce((n, f) => n + (f.counters[name] ?? 0), 0);
  };
  const errors: Record<string, number> = {};
  for (const f of frames)
    for (const [k, v] of Object.entries(f.counters))
      if (k.startsWith(ERROR_PREFIX)) errors[k.slice(ERROR_PREFIX.length)] = (errors[k.slice(ERROR_PREFIX.length)] ?? 0) + v;

  // Rates divide by measured time, not interval count: the last interval of a shard is partial.
  const measuredDuration = new Map<number, number>();
  for (const f of measured) measuredDuration.set(f.index, Math.max(measuredDuration.get(f.index) ?? 0, f.durationMs));
  const measuredSeconds = [...measuredDuration.values()].reduce((a, b) => a + b, 0) / 1000;
  const sent = sum(frames, COUNTERS.sent);
  const received = sum(frames, COUNTERS.received);
  return {
    messages: {
      sent,
      received,
      lost: sum(frames, COUNTERS.lost),
      duplicated: sum(frames, COUNTERS.duplicated),
      outOfOrder: sum(frames, COUNTERS.outOfOrder),
      sendRate: measuredSeconds ? round(sum(measured, COUNTERS.sent) / measuredSeconds) : 0,
      receiveRate: measuredSeconds ? round(sum(measured, COUNTERS.received) / measuredSeconds) : 0,
    },
    latency: latencySummary(hs.get(HISTOGRAMS.messageLatency)),
    sendLag: latencySummary(hs.get(HISTOGRAMS.sendLag)),
    connect: {
      opened: sum(frames, COUNTERS.connectionsOpened),
      failed: sum(frames, COUNTERS.connectionsFailed),
      latency: latencySummary(connectHs.get(HISTOGRAMS.wsConnect)),
    },
    errors,
    intervals: {
      measured: measuredDuration.size,
      warmup: new Set(frames.filter((f) => f.warmup).map((f) => f.index)).size,
      saturated: new Set(frames.filter((f) => f.health.saturated).map((f) => f.index)).size,
    },
  };
}

const round = (n: number) => Math.round(n * 100) / 100;
