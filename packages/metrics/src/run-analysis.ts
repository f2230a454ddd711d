import { COUNTERS, HISTOGRAMS, errorCount, type AgentBreakdown, type RunAnalysis, type SpectrumPoint } from "@volley/contracts";
import type { FrameLike } from "./aggregate";
import { addEncoded, createHistogram, type Histogram } from "./histogram";
import { latencySummary } from "./summary";

/** HdrHistogram's own plot uses 5 ticks per halving of the remaining tail: 0, 12.9, 24.2 … 50, … 75, … 99.9 … */
const TICKS_PER_HALF = 5;
/** The percentiles the run summary reports: on the spectrum as points of their own. */
const NAMED_PERCENTILES = [50, 90, 95, 99, 99.9];

/**
 * The percentile distribution of a µs histogram in ms, the way HdrHistogram prints it: percentiles
 * spaced evenly on the 1/(1−p) scale up to the last sample, then 100 (the max). Empty for no samples.
 */
export function percentileSpectrum(h: Histogram | undefined): SpectrumPoint[] {
  if (!h || h.totalCount === 0) return [];
  const total = h.totalCount;
  const points: SpectrumPoint[] = [];
  const at = (p: number) => {
    const us = h.getValueAtPercentile(p);
    points.push({ percentile: p, ms: Math.round(us) / 1000, count: Math.min(total, Math.ceil((p / 100) * total)) });
  };
  // Beyond the percentile that one sample represents there is nothing left to resolve.
  const last = 100 * (1 - 1 / total);
  // The ticks, and the percentiles the summary table names (so the chart's 99 % reads the table's
  // p99, not the first tick past it), in order.
  const levels: number[] = [];
  for (let k = 0; ; k++) {
    const p = 100 * (1 - 0.5 ** (k / TICKS_PER_HALF));
    if (p > last || k > 40 * TICKS_PER_HALF) break;
    levels.push(p);
  }
  for (const p of NAMED_PERCENTILES) if (p <= last && !levels.some((l) => Math.abs(l - p) < 1e-9)) levels.push(p);
  for (const p of levels.sort((a, b) => a - b)) at(p);
  // The bucket's highest equivalent value, like every other point (h.maxValue can be a hair lower).
  points.push({ percentile: 100, ms: Math.round(h.getValueAtPercentile(100)) / 1000, count: total });
  return points;
}

function add(target: Map<string, Histogram>, name: string, b64: string | undefined) {
  if (!b64) return;
  let h = target.get(name);
  if (!h) target.set(name, (h = createHistogram(64)));
  addEncoded(h, b64);
}

type AnalysisFrame = FrameLike & { shardId?: string };

/**
 * The run's percentile spectra (every histogram merged exactly with add(); warm-up intervals left
 * out except for connect times, which the summary also counts in full) and what each agent measured.
 */
export function analyzeFrames(frames: readonly AnalysisFrame[]): RunAnalysis {
  const merged = new Map<string, Histogram>();
  const byAgent = new Map<string, AnalysisFrame[]>();
  for (const f of frames) {
    for (const [name, b64] of Object.entries(f.histograms)) if (!f.warmup || name === HISTOGRAMS.wsConnect) add(merged, name, b64);
    const id = f.agentId ?? "unknown";
    const list = byAgent.get(id);
    if (list) list.push(f);
    else byAgent.set(id, [f]);
  }
  const spectra: Record<string, SpectrumPoint[]> = {};
  for (const [name, h] of [...merged.entries()].sort((a, b) => a[0].localeCompare(b[0]))) spectra[name] = percentileSpectrum(h);

  const agents: AgentBreakdown[] = [...byAgent.entries()]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([agentId, list]) => {
      const hs = new Map<string, Histogram>();
      const sum = (name: string) => list.reduce((n, f) => n + (f.counters[name] ?? 0), 0);
      let cpuMax = 0,
        eventLoopMaxMs = 0,
        sendLagMaxMs = 0,
        rssMbMax = 0,
        saturated = 0,
        errors = 0;
      for (const f of list) {
        if (!f.warmup) add(hs, HISTOGRAMS.messageLatency, f.histograms[HISTOGRAMS.messageLatency]);
        if (!f.warmup) add(hs, HISTOGRAMS.deliveryLatency, f.histograms[HISTOGRAMS.deliveryLatency]);
        add(hs, HISTOGRAMS.wsConnect, f.histograms[HISTOGRAMS.wsConnect]);
        cpuMax = Math.max(cpuMax, f.health.cpu);
        eventLoopMaxMs = Math.max(eventLoopMaxMs, f.health.eventLoopDelayMs.max);
        sendLagMaxMs = Math.max(sendLagMaxMs, f.health.sendLagMaxMs);
        rssMbMax = Math.max(rssMbMax, f.health.rssMb);
        if (f.health.saturated) saturated++;
        errors += errorCount(f.counters);
      }
      return {
        agentId,
        shards: new Set(list.map((f) => f.shardId ?? agentId)).size,
        intervals: list.length,
        saturated,
        sent: sum(COUNTERS.sent),
        received: sum(COUNTERS.received),
        lost: sum(COUNTERS.lost),
        errors,
        disconnects: sum(COUNTERS.connectionsDropped),
        latency: latencySummary(hs.get(HISTOGRAMS.messageLatency)),
        connect: latencySummary(hs.get(HISTOGRAMS.wsConnect)),
        ...(list.some((f) => COUNTERS.deliveriesExpected in f.counters || COUNTERS.deliveriesReceived in f.counters)
          ? {
              delivery: {
                received: sum(COUNTERS.deliveriesReceived),
                lost: sum(COUNTERS.deliveriesLost),
                latency: latencySummary(hs.get(HISTOGRAMS.deliveryLatency)),
              },
            }
          : {}),
        health: { cpuMax, eventLoopMaxMs, sendLagMaxMs, rssMbMax },
      };
    });
  return { spectra, agents };
}
