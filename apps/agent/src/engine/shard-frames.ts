import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import type { IntervalRecorder } from "@volley/metrics";
import { HealthMonitor, SATURATION } from "./health-monitor";
import type { StagePopulation } from "./stage-population";
import type { SweepStepper } from "./sweep-stepper";
import type { EngineFrame, RunShardOptions } from "./types";

const S = 1_000_000;
const LATE_US = SATURATION.sendLagMs * 1000;

/** What a frame needs of its shard at the instant it is cut. */
export interface FrameState {
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
  private readonly health = new HealthMonitor();

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

  /** Emits the current interval: a full second, or (given where it ends) the final partial one. */
  emit(state: FrameState, partialEndUs?: number): void {
    this.recorder.setGauge(COUNTERS.connectionsActive, state.active);
    const body = this.recorder.take();
    // Interval starts as whole µs from the start instant, so they fall on stage and step boundaries exactly.
    const fromUs = this.index * S;
    const toUs = partialEndUs === undefined ? fromUs + S : partialEndUs - this.t0;
    const step = this.sweep?.stepOf(fromUs, body, partialEndUs !== undefined);
    const stage = this.stages && this.startUs < state.endUs ? this.stages.plan.stageAt(fromUs) : undefined;
    const lateShare = this.intervalSends > 0 ? this.lateSends / this.intervalSends : 0;
    const health = this.health.sample({ maxMs: this.lagMaxUs / 1000, lateShare });
    this.lagMaxUs = this.intervalSends = this.lateSends = 0;
    const durationMs = partialEndUs === undefined ? 1000 : Math.max(0.001, (toUs - fromUs) / 1000);
    // A sweep sends only in its steps' holds; any other run from the start instant to its end.
    const activeUs = this.sweep ? this.sweep.activeUs(fromUs, toUs) : overlapUs(fromUs, toUs, 0, state.endUs - this.t0);
    const index = this.index++;
    this.opts.onFrame({
      index,
      startedAt: this.opts.startAt + index * 1000,
      durationMs,
      activeMs: Math.min(durationMs, activeUs / 1000),
      warmup: index * 1000 < this.warmupMs,
      counters: body.counters,
      histograms: body.histograms,
      health,
      ...(stage !== undefined ? { stage } : {}),
      ...(step ? { step } : {}),
    });
    // From t0 each time, never accumulated, so boundaries stay exact to the start instant.
    this.startUs = this.t0 + this.index * S;
  }

  stop(): void {
    this.health.stop();
  }
}

/** Length of the overlap of [a0, a1) and [b0, b1). */
export function overlapUs(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}
