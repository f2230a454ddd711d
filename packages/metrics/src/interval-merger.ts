import { COUNTERS, HISTOGRAMS, errorCount, type IntervalPoint } from "@volley/contracts";
import { createHistogram, encodeHistogram, type Histogram } from "./histogram";
import { LeftOutHistograms } from "./left-out";
import type { FrameLike } from "./aggregate";

const ms = (us: number) => Math.round(us) / 1000;
const POINT_HISTOGRAMS = [HISTOGRAMS.messageLatency, HISTOGRAMS.deliveryLatency] as const;

/**
 * One interval (one second) of a run, every shard's frame for it merged exactly, built up frame by
 * frame: each frame's histograms are decoded and added once, so a live view can re-emit the point
 * after every new frame without re-merging the ones before it.
 */
export class IntervalMerger {
  private readonly hs = new Map<string, Histogram>();
  private readonly agents = new Set<string>();
  private t = Infinity;
  private frames = 0;
  private warmupFrames = 0;
  private saturated = false;
  private sent = 0;
  private received = 0;
  private errors = 0;
  private connections = 0;
  private lost = 0;
  private disconnects = 0;
  private connectFailed = 0;
  private delivered = 0;
  private deliveryLost = 0;
  private stage: number | undefined;
  private step: number | undefined;
  private readonly health = { cpu: 0, eventLoopMs: 0, sendLagMs: 0 };

  /** `leftOut`: where an undecodable stored histogram is noted (skipped, never thrown: the rest of the second still merges). */
  constructor(
    readonly index: number,
    private readonly leftOut = new LeftOutHistograms(),
  ) {}

  /**
   * The merged histogram a frame's histogram of this name goes into, for a caller that decodes the
   * frame once for several merges (RunTally.add); undefined for names a point does not report.
   */
  target(name: string): Histogram | undefined {
    if (!(POINT_HISTOGRAMS as readonly string[]).includes(name)) return undefined;
    let h = this.hs.get(name);
    if (!h) this.hs.set(name, (h = createHistogram(64)));
    return h;
  }

  /** `histogramsAdded`: the frame's histograms already went into target(name) (decoded by the caller). */
  add(f: FrameLike, histogramsAdded = false): void {
    // Only the histograms a point reports are decoded: decoding is most of a merge's cost.
    if (!histogramsAdded)
      for (const name of POINT_HISTOGRAMS) {
        const b64 = f.histograms[name];
        if (b64) this.leftOut.add(this.target(name)!, b64, { metric: name, index: f.index, shard: (f as { shardId?: string }).shardId ?? f.agentId ?? "" });
      }
    const c = f.counters;
    this.frames++;
    if (f.warmup) this.warmupFrames++;
    this.saturated ||= f.health.saturated;
    this.t = Math.min(this.t, f.startedAt);
    this.sent += c[COUNTERS.sent] ?? 0;
    this.received += c[COUNTERS.received] ?? 0;
    this.connections += c[COUNTERS.connectionsActive] ?? 0;
    this.lost += c[COUNTERS.lost] ?? 0;
    this.disconnects += c[COUNTERS.connectionsDropped] ?? 0;
    this.connectFailed += c[COUNTERS.connectionsFailed] ?? 0;
    this.delivered += c[COUNTERS.deliveriesReceived] ?? 0;
    this.deliveryLost += c[COUNTERS.deliveriesLost] ?? 0;
    this.errors += errorCount(c);
    // The worst shard is what matters: one saturated agent skews the merged percentiles.
    this.health.cpu = Math.max(this.health.cpu, f.health.cpu);
    this.health.eventLoopMs = Math.max(this.health.eventLoopMs, f.health.eventLoopDelayMs.max);
    this.health.sendLagMs = Math.max(this.health.sendLagMs, f.health.sendLagMaxMs);
    this.agents.add(f.agentId ?? "");
    this.stage ??= f.stage ?? undefined;
    this.step ??= f.step?.index;
  }

  /** Frames merged so far. */
  get frameCount(): number {
    return this.frames;
  }

  /** The merged histograms the point is read from, encoded (stored beside the point, so seconds can be merged further exactly). */
  histograms(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, h] of this.hs) if (h.totalCount > 0) out[name] = encodeHistogram(h);
    return out;
  }

  point(): IntervalPoint {
    const lat = this.hs.get(HISTOGRAMS.messageLatency);
    const has = lat !== undefined && lat.totalCount > 0;
    const dl = this.hs.get(HISTOGRAMS.deliveryLatency);
    const pct = (h: Histogram | undefined, p: number) => (h && h.totalCount > 0 ? ms(h.getValueAtPercentile(p)) : null);
    return {
      index: this.index,
      t: this.t,
      warmup: this.frames > 0 && this.warmupFrames === this.frames,
      saturated: this.saturated,
      connections: this.connections,
      sent: this.sent,
      received: this.received,
      errors: this.errors,
      lost: this.lost,
      disconnects: this.disconnects,
      connectFailed: this.connectFailed,
      health: { ...this.health, agents: this.agents.size },
      p50: has ? ms(lat.getValueAtPercentile(50)) : null,
      p95: has ? ms(lat.getValueAtPercentile(95)) : null,
      p99: has ? ms(lat.getValueAtPercentile(99)) : null,
      max: has ? ms(lat.maxValue) : null,
      ...(this.stage !== undefined ? { stage: this.stage } : {}),
      ...(this.step !== undefined ? { step: this.step } : {}),
      ...(dl || this.delivered || this.deliveryLost
        ? { delivery: { received: this.delivered, lost: this.deliveryLost, p50: pct(dl, 50), p95: pct(dl, 95), p99: pct(dl, 99) } }
        : {}),
    };
  }
}
