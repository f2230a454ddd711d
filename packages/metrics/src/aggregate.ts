import {
  CONNECT_HISTOGRAMS,
  CLOSED_LOOP_NOTE,
  COUNTERS,
  GAUGES,
  HISTOGRAMS,
  errorsByClass,
  type IntervalFrame,
  type IntervalPoint,
  type RunSummary,
} from "@volley/contracts";
import { addEncoded, createHistogram, type Histogram } from "./histogram";
import { summarizeErrorSamples } from "./error-samples";
import { summarizeFlow } from "./flow-summary";
import { summarizeUsers } from "./users-summary";
import { IntervalMerger } from "./interval-merger";
import { latencySummary } from "./summary";

/** The parts of a stored frame aggregation needs (the db row shape is a superset). */
export type FrameLike = Pick<IntervalFrame, "index" | "startedAt" | "durationMs" | "warmup" | "counters" | "histograms" | "health"> & {
  // Stored rows carry null where a frame had no value.
  [K in "activeMs" | "stage" | "step" | "samples"]?: IntervalFrame[K] | null;
} & {
  /** Which agent sent the frame; counted in each point's health, and the key of per-agent breakdowns. */
  agentId?: string;
};

function addInto(target: Map<string, Histogram>, histograms: Record<string, string>) {
  for (const [name, b64] of Object.entries(histograms)) {
    let h = target.get(name);
    if (!h) {
      h = createHistogram(64);
      target.set(name, h);
    }
    addEncoded(h, b64);
  }
}

/** One timeline point per interval index, every shard's frame for that second merged exactly. */
export function mergeTimeline(frames: readonly FrameLike[]): IntervalPoint[] {
  const byIndex = new Map<number, IntervalMerger>();
  for (const f of frames) {
    let m = byIndex.get(f.index);
    if (!m) byIndex.set(f.index, (m = new IntervalMerger(f.index)));
    m.add(f);
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index).map((m) => m.point());
}

/**
 * The run summary from every shard's frames: counters summed, histograms merged with add() (never
 * averaged percentiles). Warm-up intervals are left out of rates and percentiles but not of totals
 * of errors and connections, which must never be hidden; connect times count in full (the ramp is
 * when they happen). Connect times are read from both `connect.time` and the older `ws.connect`.
 */
export function summarizeFrames(frames: readonly FrameLike[]): Omit<RunSummary, "thresholds"> {
  const measured = frames.filter((f) => !f.warmup);
  const hs = new Map<string, Histogram>();
  for (const f of measured) addInto(hs, f.histograms);
  let connectH: Histogram | undefined;
  for (const f of frames) {
    for (const name of CONNECT_HISTOGRAMS) {
      const b64 = f.histograms[name];
      if (!b64) continue;
      connectH ??= createHistogram(64);
      addEncoded(connectH, b64);
    }
  }

  const sum = (list: readonly FrameLike[], name: string) => {
    if (GAUGES.includes(name)) throw new Error(`${name} is a gauge`);
    return list.reduce((n, f) => n + (f.counters[name] ?? 0), 0);
  };
  const errors: Record<string, number> = {};
  for (const f of frames) errorsByClass(f.counters, errors);

  // Rates divide by measured time, not interval count: the last interval of a shard is partial.
  // Send rates divide by sending time only (activeMs): the drain after the last send is not sending.
  const measuredDuration = new Map<number, number>();
  const activeDuration = new Map<number, number>();
  for (const f of measured) {
    measuredDuration.set(f.index, Math.max(measuredDuration.get(f.index) ?? 0, f.durationMs));
    activeDuration.set(f.index, Math.max(activeDuration.get(f.index) ?? 0, f.activeMs ?? f.durationMs));
  }
  const seconds = (m: Map<number, number>) => [...m.values()].reduce((a, b) => a + b, 0) / 1000;
  const measuredSeconds = seconds(measuredDuration);
  const activeSeconds = seconds(activeDuration);
  const sent = sum(frames, COUNTERS.sent);
  const received = sum(frames, COUNTERS.received);
  const connect = latencySummary(connectH);
  const roundTrip = latencySummary(hs.get(HISTOGRAMS.messageLatency));
  const delivery = latencySummary(hs.get(HISTOGRAMS.deliveryLatency));

  const hasDeliveries = frames.some((f) => COUNTERS.deliveriesExpected in f.counters || COUNTERS.deliveriesReceived in f.counters);
  const expected = sum(frames, COUNTERS.deliveriesExpected);
  const remote = sum(frames, COUNTERS.deliveriesRemote);
  const delivered = sum(frames, COUNTERS.deliveriesReceived);
  const canary = latencySummary(hs.get(HISTOGRAMS.canaryLatency));
  const hasCanary = frames.some((f) => COUNTERS.canarySent in f.counters);
  const hasMqtt = frames.some((f) => COUNTERS.mqttAcked in f.counters || COUNTERS.mqttRetained in f.counters);
  const flow = summarizeFlow(frames);
  const users = summarizeUsers(frames);
  const errorSamples = summarizeErrorSamples(frames);
  return {
    messages: {
      sent,
      received,
      lost: sum(frames, COUNTERS.lost),
      shed: sum(frames, COUNTERS.shed),
      unsent: sum(frames, COUNTERS.unsent),
      duplicated: sum(frames, COUNTERS.duplicated),
      outOfOrder: sum(frames, COUNTERS.outOfOrder),
      sendRate: activeSeconds ? round(sum(measured, COUNTERS.sent) / activeSeconds) : 0,
      receiveRate: measuredSeconds ? round(sum(measured, COUNTERS.received) / measuredSeconds) : 0,
    },
    latency: roundTrip,
    sendLag: latencySummary(hs.get(HISTOGRAMS.sendLag)),
    connect: {
      opened: sum(frames, COUNTERS.connectionsOpened),
      failed: sum(frames, COUNTERS.connectionsFailed),
      latency: connect,
    },
    errors,
    ...(errorSamples ? { errorSamples } : {}),
    ...(hasDeliveries
      ? {
          deliveries: {
            expected,
            received: delivered,
            lost: sum(frames, COUNTERS.deliveriesLost),
            duplicated: sum(frames, COUNTERS.deliveriesDuplicated),
            lateJoiner: sum(frames, COUNTERS.deliveriesLateJoiner),
            outOfOrder: sum(frames, COUNTERS.deliveriesOutOfOrder),
            remote,
            ratio: expected > 0 ? round((100 * (delivered - remote)) / expected) : null,
            rate: activeSeconds ? round(sum(measured, COUNTERS.deliveriesReceived) / activeSeconds) : 0,
            latency: delivery,
          },
        }
      : {}),
    ...(hasMqtt ? { mqtt: { acked: sum(frames, COUNTERS.mqttAcked), retained: sum(frames, COUNTERS.mqttRetained) } } : {}),
    timings: {
      connect,
      roundTrip,
      delivery,
      firstMessage: latencySummary(hs.get(HISTOGRAMS.firstMessage)),
      canary,
      ...(hs.has(HISTOGRAMS.httpConnect) ? { httpConnect: latencySummary(hs.get(HISTOGRAMS.httpConnect)) } : {}),
    },
    ...(hasCanary
      ? {
          canary: {
            sent: sum(frames, COUNTERS.canarySent),
            received: sum(frames, COUNTERS.canaryReceived),
            lost: sum(frames, COUNTERS.canaryLost),
            latency: canary,
          },
        }
      : {}),
    ...(flow ? { flow } : {}),
    ...(users ? { users } : {}),
    ...(hs.has(HISTOGRAMS.closedLoopResponseTime)
      ? { closedLoop: { responseTime: latencySummary(hs.get(HISTOGRAMS.closedLoopResponseTime)), note: CLOSED_LOOP_NOTE } }
      : {}),
    intervals: {
      measured: measuredDuration.size,
      warmup: new Set(frames.filter((f) => f.warmup).map((f) => f.index)).size,
      saturated: new Set(frames.filter((f) => f.health.saturated).map((f) => f.index)).size,
    },
  };
}

const round = (n: number) => Math.round(n * 100) / 100;
