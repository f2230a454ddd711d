import {
  COUNTERS,
  ERROR_SAMPLES_PER_CLASS,
  HISTOGRAMS,
  errorCount,
  type AgentBreakdown,
  type Plan,
  type RunAnalysis,
  type RunSummary,
  type SweepStep,
  type Threshold,
} from "@volley/contracts";
import { summarizeFrames, type FrameLike } from "./aggregate";
import { FLOW_SAMPLES_PER_EVENT } from "./flow-summary";
import { addHistogram, createHistogram, encodeHistogram, type Histogram } from "./histogram";
import { LeftOutHistograms } from "./left-out";
import { StormSeconds } from "./reconnect-storms";
import { percentileSpectrum } from "./run-analysis";
import { sanityChecks, type AgentEvidence } from "./sanity-checks";
import { latencySummary } from "./summary";
import { capacityOf, summarizeSteps, type SweepContext } from "./sweep-steps";
import { evaluateThresholds } from "./thresholds";

/** A frame as the tally takes it: a stored row (shard named) or any FrameLike. */
export type TallyFrame = FrameLike & { shardId?: string };

/** Where a frame sits in a from-scratch read of a run (index, then shard): what "first seen" orders by. */
type Order = readonly [index: number, shard: string, position: number];
const before = (a: Order, b: Order) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0) || a[2] - b[2];

function slot(map: Map<string, Histogram>, name: string): Histogram {
  let h = map.get(name);
  if (!h) map.set(name, (h = createHistogram(64)));
  return h;
}
function count(map: Map<string, number>, name: string, n: number): void {
  map.set(name, (map.get(name) ?? 0) + n);
}

/** A growable bit set of interval indexes (an agent's seconds, a shard's seqs): a bit per second, not an entry per frame. */
export class IndexBits {
  private bits = new Uint8Array(64);
  size = 0;
  min = Infinity;
  max = -1;
  has(i: number): boolean {
    return i >= 0 && i >> 3 < this.bits.length && (this.bits[i >> 3]! & (1 << (i & 7))) !== 0;
  }
  add(i: number): boolean {
    if (i < 0 || this.has(i)) return false;
    if (i >> 3 >= this.bits.length) {
      const grown = new Uint8Array(Math.max(this.bits.length * 2, (i >> 3) + 1));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[i >> 3]! |= 1 << (i & 7);
    this.size++;
    this.min = Math.min(this.min, i);
    this.max = Math.max(this.max, i);
    return true;
  }
}

const USER_STEP_PREFIX = "step.";

/** A sweep step's attempt: its counters and the two histograms summarizeSteps merges, added up as frames come. */
interface StepCarrier {
  frame: TallyFrame;
  latency?: Histogram;
  delivery?: Histogram;
  /** Users: every timed step (`step.<name>`) merged, as summarizeSteps merges them. */
  userSteps?: Histogram;
  encoded: boolean;
}

interface AgentTally {
  shards: Set<string>;
  intervals: number;
  saturated: number;
  counters: Map<string, number>;
  errors: number;
  hs: Map<string, Histogram>;
  health: { cpuMax: number; eventLoopMaxMs: number; sendLagMaxMs: number; rssMbMax: number };
  deliveries: boolean;
  seconds: IndexBits;
}

/**
 * A run's measurements folded frame by frame: every frame is decoded and added once, and the
 * summary, sweep steps, spectra and per-agent breakdown are read off the merged state at any time.
 * Memory grows with histogram names, agents, steps and seconds (a few numbers each), never with
 * frames. The summary and the steps are the same functions a reader of every frame calls
 * (summarizeFrames, summarizeSteps), given compact stand-ins instead of the frames, so a field added
 * there is in the tally too; `summary()` equals `summarizeRun` of the same frames and `analysis()`
 * equals `analyzeFrames` (run-tally.test.ts holds them to it), so the hub's live verdict, its final
 * one and a recomputation from raw frames agree.
 */
export class RunTally {
  frames = 0;
  /** Stored histograms that could not be decoded: left out of every merge and named in the summary. */
  readonly leftOut = new LeftOutHistograms();
  private measuredFrames = 0;
  /**
   * The summary is summarizeFrames itself, over compact stand-ins for the frames: one per (second,
   * warm-up or not) with the second's longest interval and sending time, its saturation flag and the
   * samples still among the first; and one carrier per warm-up flag with every counter summed and
   * every histogram merged (names in order of first appearance, as a reader of all frames meets them).
   */
  private readonly seconds = new Map<string, TallyFrame & { samples: NonNullable<TallyFrame["samples"]> }>();
  private readonly carriers = new Map<boolean, Carrier>();
  /** Samples a reader of every frame would show: per flow event its first ones, per error class its first distinct texts. */
  private readonly keptSamples = new Map<string, KeptSample[]>();
  private readonly saturatedSeconds = new IndexBits();
  private lastIndex = -1;
  private stallMaxMs = 0;
  /**
   * Sweep steps are summarized by summarizeSteps itself, over compact stand-ins for the frames: one
   * per (step, attempt, second) with the second's rates, times and flags combined as summarizeSteps
   * combines them, and one per (step, attempt) carrying its summed counters and merged histograms.
   */
  private readonly stepSeconds = new Map<string, TallyFrame>();
  private readonly stepCarriers = new Map<string, StepCarrier>();
  /** The seconds reconnect storms are read from (summary.reconnectStorms). */
  private readonly stormSeconds = new StormSeconds();
  private readonly agents = new Map<string, AgentTally>();
  /** Each shard's first interval start (hub clock), for the start spread when agents sent no start report. */
  private readonly firstStart = new Map<string, number>();

  /** `also`: a further merge a histogram of the frame goes into (decoded once for all of them). */
  add(f: TallyFrame, also?: (name: string) => Histogram | undefined): void {
    const shard = f.shardId ?? f.agentId ?? "";
    this.frames++;
    const measured = !f.warmup;
    if (measured) this.measuredFrames++;
    const carrier = this.carrierOf(f);
    const step = this.stepOf(f);
    const agent = this.agentOf(f);
    let position = 0;
    // Each histogram is decoded once and added to every merge it belongs to.
    for (const [name, b64] of Object.entries(f.histograms)) {
      carrier.first(name, [f.index, shard, position++], "histogram");
      if (!b64) continue;
      const into: Histogram[] = [slot(carrier.hs, name)];
      if (step && name === HISTOGRAMS.messageLatency) into.push((step.latency ??= createHistogram(64)));
      if (step && name === HISTOGRAMS.deliveryLatency) into.push((step.delivery ??= createHistogram(64)));
      if (step && name.startsWith(USER_STEP_PREFIX)) into.push((step.userSteps ??= createHistogram(64)));
      if (name === HISTOGRAMS.reconnectTime) into.push(this.stormSeconds.histogramFor(f));
      if ((measured && (name === HISTOGRAMS.messageLatency || name === HISTOGRAMS.deliveryLatency)) || name === HISTOGRAMS.wsConnect)
        into.push(slot(agent.hs, name));
      const extra = also?.(name);
      if (extra) into.push(extra);
      this.leftOut.add(into, b64, { metric: name, index: f.index, shard });
    }
    this.stormSeconds.count(f);
    for (const [k, v] of Object.entries(f.counters)) {
      carrier.first(k, [f.index, shard, position++], "counter");
      carrier.counters.set(k, (carrier.counters.get(k) ?? 0) + v);
    }
    carrier.dirty = true;
    const key = `${f.index}:${f.warmup}`;
    const second = this.seconds.get(key);
    if (second) {
      second.durationMs = Math.max(second.durationMs, f.durationMs);
      second.activeMs = Math.max(second.activeMs!, f.activeMs ?? f.durationMs);
      second.health.saturated ||= f.health.saturated;
    } else {
      this.seconds.set(key, {
        index: f.index,
        startedAt: f.startedAt,
        durationMs: f.durationMs,
        activeMs: f.activeMs ?? f.durationMs,
        warmup: f.warmup,
        counters: {},
        histograms: {},
        health: { ...f.health },
        samples: [],
      });
    }
    f.samples?.forEach((sample, i) => {
      this.keepSample(key, [f.index, shard, i], sample);
    });
    if (f.health.saturated) this.saturatedSeconds.add(f.index);
    this.lastIndex = Math.max(this.lastIndex, f.index);
    this.stallMaxMs = Math.max(this.stallMaxMs, f.health.eventLoopDelayMs.max);
    if (f.index === 0) this.firstStart.set(shard, Math.min(f.startedAt, this.firstStart.get(shard) ?? Infinity));
  }

  private carrierOf(f: TallyFrame): Carrier {
    let c = this.carriers.get(f.warmup);
    if (!c) this.carriers.set(f.warmup, (c = new Carrier(f)));
    return c;
  }

  /**
   * Keeps a sample while it can still be among those a summary shows: a flow event's first
   * FLOW_SAMPLES_PER_EVENT, an error class's first ERROR_SAMPLES_PER_CLASS distinct texts (a text
   * seen again earlier moves up). The rest are dropped: memory stays bounded.
   */
  private keepSample(second: string, at: Order, sample: NonNullable<TallyFrame["samples"]>[number]): void {
    const error = sample.kind === "error";
    const group = `${error ? "error" : "flow"}:${sample.event}`;
    let list = this.keptSamples.get(group);
    if (!list) this.keptSamples.set(group, (list = []));
    const same = error ? list.find((k) => k.sample.data === sample.data) : undefined;
    if (same) {
      if (before(at, same.at) >= 0) return;
      Object.assign(same, { at, second });
    } else list.push({ at, second, sample });
    list.sort((x, y) => before(x.at, y.at));
    const limit = error ? ERROR_SAMPLES_PER_CLASS : FLOW_SAMPLES_PER_EVENT;
    if (list.length > limit) list.length = limit;
  }

  /** The stand-ins summarizeFrames reads: seconds (with the kept samples, in frame order) and the carriers. */
  private standIns(): TallyFrame[] {
    for (const s of this.seconds.values()) s.samples.length = 0;
    const kept = [...this.keptSamples.values()].flat().sort((x, y) => before(x.at, y.at));
    for (const k of kept) this.seconds.get(k.second)!.samples.push(k.sample);
    return [...[...this.carriers.values()].map((c) => c.frame()), ...this.seconds.values()];
  }

  /** The frame's sweep step stand-ins, updated (histograms are added by the caller, into the carrier's). */
  private stepOf(f: TallyFrame): StepCarrier | undefined {
    const step = f.step;
    if (!step) return undefined;
    const attempt = (step as { attempt?: number }).attempt ?? 0;
    const key = `${step.index}:${attempt}`;
    const second = this.stepSeconds.get(`${key}:${f.index}`);
    if (second) {
      const st = second.step!;
      st.rate = step.per === "aggregate" ? st.rate + step.rate : Math.max(st.rate, step.rate);
      second.activeMs = Math.max(second.activeMs!, f.activeMs ?? f.durationMs);
      second.durationMs = Math.min(second.durationMs, f.durationMs);
      second.startedAt = Math.min(second.startedAt, f.startedAt);
      second.health.saturated ||= f.health.saturated;
      // Flags and reasons (failed, generator limits): any frame's counts, the first one found is kept.
      const into = st as Record<string, unknown>;
      for (const [k, v] of Object.entries(step)) if (k !== "rate" && !into[k] && v) into[k] = v;
    } else {
      this.stepSeconds.set(`${key}:${f.index}`, {
        index: f.index,
        startedAt: f.startedAt,
        durationMs: f.durationMs,
        activeMs: f.activeMs ?? f.durationMs,
        warmup: f.warmup,
        counters: {},
        histograms: {},
        health: { ...f.health },
        step: { ...step },
      });
    }
    let carrier = this.stepCarriers.get(key);
    if (!carrier) {
      // Adds nothing to rates, times or flags (rate 0, no sending time, no flag), only counts and histograms.
      const bare = Object.fromEntries(
        Object.entries(step).map(([k, v]) => [
          k,
          k === "index" || k === "per" || k === "attempt" ? v : typeof v === "number" ? 0 : typeof v === "boolean" ? false : undefined,
        ]),
      );
      carrier = {
        frame: {
          index: f.index,
          startedAt: Infinity,
          durationMs: 1000,
          activeMs: 0,
          warmup: false,
          counters: {},
          histograms: {},
          health: { ...f.health, saturated: false },
          step: bare as typeof step,
        },
        encoded: true,
      };
      this.stepCarriers.set(key, carrier);
    }
    for (const [k, v] of Object.entries(f.counters)) carrier.frame.counters[k] = (carrier.frame.counters[k] ?? 0) + v;
    carrier.encoded = false;
    return carrier;
  }

  /** The frame's agent, its counts and health added (histograms are added by the caller). */
  private agentOf(f: TallyFrame): AgentTally {
    const id = f.agentId ?? "unknown";
    let a = this.agents.get(id);
    if (!a) {
      a = {
        shards: new Set(),
        intervals: 0,
        saturated: 0,
        counters: new Map(),
        errors: 0,
        hs: new Map(),
        health: { cpuMax: 0, eventLoopMaxMs: 0, sendLagMaxMs: 0, rssMbMax: 0 },
        deliveries: false,
        seconds: new IndexBits(),
      };
      this.agents.set(id, a);
    }
    a.shards.add(f.shardId ?? id);
    a.intervals++;
    if (f.health.saturated) a.saturated++;
    for (const [k, v] of Object.entries(f.counters)) count(a.counters, k, v);
    a.errors += errorCount(f.counters);
    a.deliveries ||= COUNTERS.deliveriesExpected in f.counters || COUNTERS.deliveriesReceived in f.counters;
    a.health.cpuMax = Math.max(a.health.cpuMax, f.health.cpu);
    a.health.eventLoopMaxMs = Math.max(a.health.eventLoopMaxMs, f.health.eventLoopDelayMs.max);
    a.health.sendLagMaxMs = Math.max(a.health.sendLagMaxMs, f.health.sendLagMaxMs);
    a.health.rssMbMax = Math.max(a.health.rssMbMax, f.health.rssMb);
    if (f.agentId) a.seconds.add(f.index);
    return a;
  }

  /** Frames measured outside warm-up so far (a verdict on warm-up alone would be unfair). */
  get measured(): number {
    return this.measuredFrames;
  }

  /** Each shard's first interval start (hub clock), by shard id. */
  firstIntervalStarts(): ReadonlyMap<string, number> {
    return this.firstStart;
  }

  /** The summary without thresholds: summarizeFrames over the stand-ins. */
  measuredSummary(): Omit<RunSummary, "thresholds"> {
    return summarizeFrames(this.standIns());
  }

  /** Sweep steps, as summarizeSteps(frames, ctx): that function, over the stand-ins. */
  sweepSteps(ctx?: SweepContext): SweepStep[] {
    if (this.stepCarriers.size === 0) return [];
    for (const c of this.stepCarriers.values()) {
      if (c.encoded) continue;
      const hs: Record<string, string> = {};
      if (c.latency) hs[HISTOGRAMS.messageLatency] = encodeHistogram(c.latency);
      if (c.delivery) hs[HISTOGRAMS.deliveryLatency] = encodeHistogram(c.delivery);
      if (c.userSteps) hs[`${USER_STEP_PREFIX}all`] = encodeHistogram(c.userSteps);
      c.frame.histograms = hs;
      c.encoded = true;
    }
    return summarizeSteps([...this.stepSeconds.values(), ...[...this.stepCarriers.values()].map((c) => c.frame)], ctx);
  }

  /** What the sanity checks read of the agents, as agentEvidence(frames). */
  evidence(): AgentEvidence {
    const last = this.lastIndex;
    const silent = [...this.agents].flatMap(([agentId, a]) => {
      if (a.seconds.size === 0) return [];
      const missing = a.seconds.max - a.seconds.min + 1 - a.seconds.size + Math.max(0, last - a.seconds.max - 1);
      return missing > 0 ? [{ agentId, missing }] : [];
    });
    return { stallMaxMs: this.stallMaxMs, saturatedIntervals: this.saturatedSeconds.size, silent };
  }

  /** The full summary, as summarizeRun(frames, thresholds, plan). */
  summary(thresholds: ReadonlyArray<string | Threshold>, plan?: SweepContext & Partial<Pick<Plan, "sanity">>): RunSummary {
    const measured = this.measuredSummary();
    const steps = this.sweepSteps(plan);
    const capacity = capacityOf(steps, plan);
    const storms = this.stormSeconds.storms();
    const full = { ...measured, ...(steps.length > 0 ? { steps } : {}), ...(capacity ? { capacity } : {}), ...(storms ? { reconnectStorms: storms } : {}) };
    const sanity = plan ? sanityChecks(full, plan.sanity, this.evidence()) : [];
    const leftOut = this.leftOut.note();
    return { ...full, ...(leftOut ? { leftOut } : {}), thresholds: [...evaluateThresholds(thresholds, full), ...sanity] };
  }

  /** Spectra and per-agent breakdown, as analyzeFrames(frames). */
  analysis(): RunAnalysis {
    // Spectra are of the measured (non-warm-up) histograms, which the measured carrier holds merged,
    // except ws.connect, shown in full: warm-up connects are connects too.
    const measured = this.carriers.get(false)?.hs ?? new Map<string, Histogram>();
    const warmup = this.carriers.get(true)?.hs;
    const spectraH = new Map(measured);
    const warmupConnect = warmup?.get(HISTOGRAMS.wsConnect);
    if (warmupConnect) {
      const connect = createHistogram(64);
      const measuredConnect = measured.get(HISTOGRAMS.wsConnect);
      if (measuredConnect) addHistogram(connect, measuredConnect);
      addHistogram(connect, warmupConnect);
      spectraH.set(HISTOGRAMS.wsConnect, connect);
    }
    const spectra: RunAnalysis["spectra"] = {};
    for (const [name, h] of [...spectraH.entries()].sort((a, b) => a[0].localeCompare(b[0]))) spectra[name] = percentileSpectrum(h);
    const agents: AgentBreakdown[] = [...this.agents.entries()]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([agentId, a]) => {
        const c = (name: string) => a.counters.get(name) ?? 0;
        return {
          agentId,
          shards: a.shards.size,
          intervals: a.intervals,
          saturated: a.saturated,
          sent: c(COUNTERS.sent),
          received: c(COUNTERS.received),
          lost: c(COUNTERS.lost),
          errors: a.errors,
          disconnects: c(COUNTERS.connectionsDropped),
          latency: latencySummary(a.hs.get(HISTOGRAMS.messageLatency)),
          connect: latencySummary(a.hs.get(HISTOGRAMS.wsConnect)),
          ...(a.deliveries
            ? {
                delivery: {
                  received: c(COUNTERS.deliveriesReceived),
                  lost: c(COUNTERS.deliveriesLost),
                  latency: latencySummary(a.hs.get(HISTOGRAMS.deliveryLatency)),
                },
              }
            : {}),
          health: { ...a.health },
        };
      });
    return { spectra, agents };
  }
}

interface KeptSample {
  at: Order;
  /** The seconds stand-in it is shown in. */
  second: string;
  sample: NonNullable<TallyFrame["samples"]>[number];
}

/** Every counter summed and every histogram merged, of the frames with one warm-up flag: one stand-in frame for all of them. */
class Carrier {
  readonly counters = new Map<string, number>();
  readonly hs = new Map<string, Histogram>();
  private readonly order = new Map<string, Order>();
  dirty = true;
  private cached: TallyFrame | null = null;
  /** Sits on the first second it was seen in, adding no time and no flag of its own. */
  private readonly index: number;

  constructor(private readonly first_: TallyFrame) {
    this.index = first_.index;
  }

  first(name: string, at: Order, kind: "histogram" | "counter"): void {
    const key = `${kind}:${name}`;
    const was = this.order.get(key);
    if (!was || before(at, was) < 0) this.order.set(key, at);
  }

  frame(): TallyFrame {
    if (this.cached && !this.dirty) return this.cached;
    const by = (kind: string) => (a: string, b: string) => before(this.order.get(`${kind}:${a}`)!, this.order.get(`${kind}:${b}`)!);
    const histograms: Record<string, string> = {};
    for (const name of [...this.hs.keys()].sort(by("histogram"))) histograms[name] = encodeHistogram(this.hs.get(name)!);
    const counters: Record<string, number> = {};
    for (const name of [...this.counters.keys()].sort(by("counter"))) counters[name] = this.counters.get(name)!;
    const f = this.first_;
    this.cached = {
      index: this.index,
      startedAt: f.startedAt,
      durationMs: 0,
      activeMs: 0,
      warmup: f.warmup,
      counters,
      histograms,
      health: { ...f.health, saturated: false },
    };
    this.dirty = false;
    return this.cached;
  }
}
