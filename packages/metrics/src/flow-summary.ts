import { COUNTERS, ERROR_PREFIX, HISTOGRAMS, type FlowSummary, type IntervalFrame } from "@volley/contracts";
import { addEncoded, createHistogram, type Histogram } from "./histogram";
import { latencySummary } from "./summary";

/** Per run and event, the unmatched-message samples worth showing (the hub stores no more). */
export const FLOW_SAMPLES_PER_EVENT = 20;
/** In all, so a server sending many kinds of events does not bloat every read of the summary. */
export const FLOW_SAMPLES_TOTAL = 100;

const SETUP_PREFIX = "setup.";
const SETUP_ERROR_PREFIX = `${ERROR_PREFIX}setup.`;
const EVENT_PREFIX = "events.";
const UNMATCHED_PREFIX = "unmatched.";
const KIND_PREFIX = `${HISTOGRAMS.messageLatency}.`;

/** Frames carry error samples in the same list (kind "error"); a flow's are the unmatched ones (kind absent in older frames). */
const isUnmatched = (s: NonNullable<IntervalFrame["samples"]>[number]) => s.kind !== "error";

/** The parts of a frame the flow section reads (stored rows carry null for no samples). */
export type FlowFrameLike = Pick<IntervalFrame, "index" | "warmup" | "counters" | "histograms"> & { samples?: IntervalFrame["samples"] | null };

/**
 * The flow section of a run summary, or undefined when no frame carries a flow's metrics. Setup
 * steps count in full, warm-up included (connections set up during the ramp, like connect times);
 * per-kind round trips leave warm-up out, as the run's round trip does. Samples: the first
 * FLOW_SAMPLES_PER_EVENT per event in interval order.
 */
export function summarizeFlow(frames: readonly FlowFrameLike[]): FlowSummary | undefined {
  const setupH = new Map<string, Histogram>();
  const setupFailed = new Map<string, number>();
  const kindH = new Map<string, Histogram>();
  const received = new Map<string, number>();
  const unmatchedBy = new Map<string, number>();
  let unmatched = 0;
  let pushReceived = 0;
  let clockAhead = 0;
  let pushH: Histogram | undefined;
  let seen = false;
  const add = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n);
  const addH = (m: Map<string, Histogram>, k: string, b64: string) => {
    let h = m.get(k);
    if (!h) m.set(k, (h = createHistogram(64)));
    addEncoded(h, b64);
  };

  for (const f of frames) {
    for (const [name, b64] of Object.entries(f.histograms)) {
      if (name.startsWith(SETUP_PREFIX)) {
        seen = true;
        addH(setupH, name.slice(SETUP_PREFIX.length), b64);
      } else if (!f.warmup && name.startsWith(KIND_PREFIX)) {
        seen = true;
        addH(kindH, name.slice(KIND_PREFIX.length), b64);
      } else if (!f.warmup && name === HISTOGRAMS.pushLatency) {
        seen = true;
        pushH ??= createHistogram(64);
        addEncoded(pushH, b64);
      }
    }
    for (const [name, n] of Object.entries(f.counters)) {
      if (name.startsWith(SETUP_ERROR_PREFIX)) add(setupFailed, name.slice(SETUP_ERROR_PREFIX.length), n);
      else if (name.startsWith(EVENT_PREFIX)) add(received, name.slice(EVENT_PREFIX.length), n);
      else if (name.startsWith(UNMATCHED_PREFIX)) add(unmatchedBy, name.slice(UNMATCHED_PREFIX.length), n);
      else if (name === COUNTERS.unmatched) unmatched += n;
      else if (name === COUNTERS.pushReceived) pushReceived += n;
      else if (name === COUNTERS.pushClockAhead) clockAhead += n;
      else continue;
      seen = true;
    }
    if (f.samples?.some(isUnmatched)) seen = true;
  }
  if (!seen) return undefined;

  const steps = [...new Set([...setupH.keys(), ...setupFailed.keys()])];
  const events = [...new Set([...received.keys(), ...unmatchedBy.keys()])]
    .map((event) => ({ event, received: received.get(event) ?? 0, unmatched: unmatchedBy.get(event) ?? 0 }))
    .sort((a, b) => b.received - a.received || a.event.localeCompare(b.event));
  const kinds = [...kindH].map(([kind, h]) => ({ kind, latency: latencySummary(h) }));
  return {
    setup: steps.map((step) => {
      const latency = latencySummary(setupH.get(step));
      return { step, count: latency.count, failed: setupFailed.get(step) ?? 0, latency };
    }),
    events,
    unmatched,
    samples: firstSamples(frames),
    ...(kinds.length > 0 ? { kinds } : {}),
    ...(pushReceived > 0 || clockAhead > 0 || pushH ? { push: { received: pushReceived, clockAhead, latency: latencySummary(pushH) } } : {}),
  };
}

/**
 * The first FLOW_SAMPLES_PER_EVENT samples of each event, frames taken in interval order; past
 * FLOW_SAMPLES_TOTAL, every event keeps an equal share (round robin), so rare events still show.
 * Grouped by event, in the order events first appeared.
 */
function firstSamples(frames: readonly FlowFrameLike[]): FlowSummary["samples"] {
  const withSamples = frames.filter((f) => f.samples?.some(isUnmatched));
  if (withSamples.length === 0) return [];
  const ordered = [...withSamples].sort((a, b) => a.index - b.index);
  const byEvent = new Map<string, string[]>();
  for (const f of ordered) {
    for (const s of f.samples!) {
      if (!isUnmatched(s)) continue;
      let list = byEvent.get(s.event);
      if (!list) byEvent.set(s.event, (list = []));
      if (list.length < FLOW_SAMPLES_PER_EVENT) list.push(s.data);
    }
  }
  const quota = new Map([...byEvent.keys()].map((e) => [e, 0]));
  for (let taken = 0, round = 0; taken < FLOW_SAMPLES_TOTAL && round < FLOW_SAMPLES_PER_EVENT; round++) {
    for (const [event, list] of byEvent) {
      if (taken >= FLOW_SAMPLES_TOTAL) break;
      if (list.length > round) {
        quota.set(event, round + 1);
        taken++;
      }
    }
  }
  return [...byEvent].flatMap(([event, list]) => list.slice(0, quota.get(event)).map((data) => ({ event, data })));
}
