import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { encodeHistogram, type Histogram, type IntervalRecorder } from "@volley/metrics";
import { HealthMonitor, SATURATION, saturationCauses } from "./health-monitor";
import type { StagePopulation } from "./stage-population";
import type { SweepStepper } from "./sweep-stepper";
import type { EngineFrame, RunShardOptions } from "./types";

const S = 1_000_000;
const LATE_US = SATURATION.sendLagMs * 1000;
/** A closed loop's interval is judged by its event loop's busy share only with at least this much of it sending. */
const CLOSED_LOOP_JUDGED_US = 250_000;

/** What a frame needs of its shard at the instant it is cut. */
export interface FrameState {
  /** Unmatched (flows) and error samples taken since the last frame (the frame takes and empties the list). */
  samples?: NonNullable<EngineFrame["samples"]>;
  /** Connections counted active now (the gauge). */
  active: number;
  /** The run's end, µs monotonic: the last intended send is before it (Infinity while a sweep has not fixed it). */
  endUs: number;
}

/**
 * Cuts a shard's recorder into one frame per second from the start instant, the final partial
 * one included: counters, histograms, the agent's own health (CPU, event loop, send lag), and
 * where the interval sits in the plan (stage, sweep step, and activeMs: how much of it the
 * schedule was sending, so send rates leave out a sweep's ramp and gaps and the final drain).
 */
export class ShardFrames {
  /** Frames emitted so far; the next frame's index. */
  index = 0;
  /** The current interval's start, µs monotonic. */
  startUs = 0;
  private t0 = 0;
  private lagMaxUs = 0;
  private intervalSends = 0;
  private lateSends = 0;
  private intervalShed = 0;
  /**
   * The shard's sends are a closed loop's (each user sends on its reply): no schedule for send lag
   * to fall behind, so its intervals are judged saturated by the event loop's busy share as well.
   */
  closedLoop = false;
  private readonly health = new HealthMonitor();
  /** Frames cut but not yet handed over (histograms still being encoded), oldest first. */
  private readonly pending: { frame: EngineFrame; toEncode: [string, Histogram][] }[] = [];
  private finishing: NodeJS.Immediate | undefined;

  constructor(
    private readonly recorder: IntervalRecorder,
    private readonly opts: Pick<RunShardOptions, "startAt" | "onFrame">,
    private readonly warmupMs: number,
    private readonly sweep: SweepStepper | undefined,
    private readonly stages: StagePopulation | undefined,
  ) {}

  /** The start instant (µs monotonic): interval 0 begins here. */
  begin(t0Us: number): void {
    this.t0 = this.startUs = t0Us;
  }

  /** Schedule begins: the first interval's CPU and event-loop window starts now. */
  started(): void {
    this.health.sample();
  }

  /** When the current interval ends. */
  get nextUs(): number {
    return this.startUs + S;
  }

  /** One message went out `lagUs` after its intended time. */
  sent(lagUs: number): void {
    this.recorder.recordMicros(HISTOGRAMS.sendLag, lagUs);
    if (lagUs > this.lagMaxUs) this.lagMaxUs = lagUs;
    if (lagUs > LATE_US) this.lateSends++;
    this.intervalSends++;
  }

  /** One slot was given up on unsent, `lagUs` after its intended time: counted, its lag recorded, the interval saturated. */
  shed(lagUs: number): void {
    this.recorder.recordMicros(HISTOGRAMS.sendLag, lagUs);
    this.recorder.increment(COUNTERS.shed);
    if (lagUs > this.lagMaxUs) this.lagMaxUs = lagUs;
    this.intervalShed++;
  }

  /**
   * Cuts the current interval (a full second, or given where it ends the final partial one) and
   * emits it. The cut itself is cheap and happens now, at the boundary; encoding the histograms
   * (pako deflate, 1–10 ms a frame while the code is cold) is then done one histogram per turn of
   * the event loop, so the sends due right after a boundary go out on time. A sweep's frames and
   * the final one are finished at once: the sweep judges each step on its encoded frames, and the
   * run's outcome waits for its last frame.
   */
  emit(state: FrameState, partialEndUs?: number): void {
    const deferred = partialEndUs === undefined && !this.sweep;
    if (!deferred) this.flush();
    this.recorder.setGauge(COUNTERS.connectionsActive, state.active);
    const cut = this.recorder.cut();
    // Interval starts as whole µs from the start instant, so they fall on stage and step boundaries exactly.
    const fromUs = this.index * S;
    const toUs = partialEndUs === undefined ? fromUs + S : partialEndUs - this.t0;
    const histograms: Record<string, string> = {};
    const body = { counters: cut.counters, histograms };
    if (!deferred) for (const [k, h] of cut.histograms) histograms[k] = this.encode(h);
    const stage = this.stages && this.startUs < state.endUs ? this.stages.plan.stageAt(fromUs) : undefined;
    const durationMs = partialEndUs === undefined ? 1000 : Math.max(0.001, (toUs - fromUs) / 1000);
    // A sweep sends only in its steps' holds; any other run from the start instant to its end.
    const activeUs = this.sweep ? this.sweep.activeUs(fromUs, toUs) : overlapUs(fromUs, toUs, 0, state.endUs - this.t0);
    // The drain after a closed loop's last send (replies, closes, the final frame's encoding) says nothing of who limited its rate.
    const closedLoop = this.closedLoop && activeUs >= CLOSED_LOOP_JUDGED_US;
    const sendLag = { maxMs: this.lagMaxUs / 1000, sends: this.intervalSends, late: this.lateSends, shed: this.intervalShed, closedLoop };
    const health = this.health.sample(sendLag);
    // A sweep step is judged knowing whether the agent itself was the bottleneck, and why.
    const step = this.sweep?.stepOf(fromUs, body, partialEndUs !== undefined, {
      saturated: health.saturated,
      causes: health.saturated ? saturationCauses(health, sendLag) : [],
    });
    this.lagMaxUs = this.intervalSends = this.lateSends = this.intervalShed = 0;
    const index = this.index++;
    const frame: EngineFrame = {
      index,
      startedAt: this.opts.startAt + index * 1000,
      durationMs,
      activeMs: Math.min(durationMs, activeUs / 1000),
      warmup: index * 1000 < this.warmupMs || (this.sweep?.warmingUp(fromUs) ?? false),
      counters: cut.counters,
      histograms,
      health,
      ...(state.samples && state.samples.length > 0 ? { samples: state.samples.splice(0, 100) } : {}),
      ...(stage !== undefined ? { stage } : {}),
      ...(step ? { step } : {}),
    };
    // From t0 each time, never accumulated, so boundaries stay exact to the start instant.
    this.startUs = this.t0 + this.index * S;
    if (!deferred) return this.opts.onFrame(frame);
    this.pending.push({ frame, toEncode: cut.histograms });
    this.finishing ??= setImmediate(this.finishStep);
  }

  /** One step of finishing the oldest pending frame: encode one histogram, or hand the frame over. */
  private readonly finishStep = (): void => {
    this.finishing = undefined;
    const p = this.pending[0];
    if (!p) return;
    const next = p.toEncode.shift();
    if (next) p.frame.histograms[next[0]] = this.encode(next[1]);
    else {
      this.pending.shift();
      this.opts.onFrame(p.frame);
    }
    if (this.pending.length > 0) this.finishing = setImmediate(this.finishStep);
  };

  /** Finishes every pending frame now, in order. */
  private flush(): void {
    if (this.finishing) clearImmediate(this.finishing);
    this.finishing = undefined;
    for (const p of this.pending.splice(0)) {
      for (const [k, h] of p.toEncode) p.frame.histograms[k] = this.encode(h);
      this.opts.onFrame(p.frame);
    }
  }

  private encode(h: Histogram): string {
    const encoded = encodeHistogram(h);
    this.recorder.release(h);
    return encoded;
  }

  stop(): void {
    this.flush();
    this.health.stop();
  }
}

/** Length of the overlap of [a0, a1) and [b0, b1). */
export function overlapUs(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}
