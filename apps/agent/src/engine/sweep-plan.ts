import { COUNTERS, ERROR_PREFIX, durationMs, sweepRates, type Plan, type Sweep } from "@volley/contracts";
import { addEncoded, createHistogram, mainLatencyMetric, recordMicros, stopReason, type Histogram } from "@volley/metrics";

const S = 1_000_000;

/**
 * The steps of a sweep in time, in µs from the shard's start instant (whole numbers, so interval
 * boundaries compare exactly). Stepping begins on an interval boundary once every connection has
 * opened (or failed); step k holds from begin + k·(hold + gap) for `hold`. Only steps whose whole
 * hold fits in scenario.duration are planned, so a step is never cut short by the plan itself.
 */
export class SweepPlan {
  readonly rates: number[];
  readonly holdUs: number;
  private readonly periodUs: number;
  private beginUs = -1;

  constructor(sweep: Sweep, plan: Plan) {
    this.holdUs = durationMs(sweep.hold) * 1000;
    this.periodUs = this.holdUs + durationMs(sweep.gap) * 1000;
    const durationUs = durationMs(plan.scenario.duration) * 1000;
    const fit = durationUs < this.holdUs ? 0 : Math.floor((durationUs - this.holdUs) / this.periodUs) + 1;
    this.rates = sweepRates(sweep, plan.scenario.message.rate).slice(0, fit);
  }

  get begun(): boolean {
    return this.beginUs >= 0;
  }

  /** Fixes the first step's start: the first interval boundary (whole seconds) at or after `nowUs`. */
  begin(nowUs: number): void {
    this.beginUs = Math.max(0, Math.ceil(nowUs / S)) * S;
  }

  holdStart(k: number): number {
    return this.beginUs + k * this.periodUs;
  }

  holdEnd(k: number): number {
    return this.holdStart(k) + this.holdUs;
  }

  /** The step whose hold contains `tUs`, or -1 (ramp, gaps, after the last step, or not begun). */
  stepAt(tUs: number): number {
    if (this.beginUs < 0 || tUs < this.beginUs) return -1;
    const k = Math.floor((tUs - this.beginUs) / this.periodUs);
    return k < this.rates.length && tUs < this.holdEnd(k) ? k : -1;
  }
}

/**
 * One step's measurements as the shard saw them, frame by frame, judged against stopWhen at the
 * end of the hold. Messages still awaited then are counted at their age so far: a lower bound on
 * their latency, so a server that stalls at the end of a hold cannot pass for a quick one, and a
 * step is never failed on a latency it might not have had.
 */
export class StepJudge {
  private readonly metric: string;
  private latency: Histogram | undefined;
  private sent = 0;
  private lost = 0;
  private deliveriesExpected = 0;
  private deliveriesLost = 0;
  private errors = 0;
  private disconnects = 0;

  constructor(private readonly plan: Plan) {
    this.metric = mainLatencyMetric(plan.scenario);
  }

  /** Whether awaited messages' ages count as round trips (true) or deliveries (false). */
  get roundTrip(): boolean {
    return this.metric !== "delivery.latency";
  }

  /** A frame of the step's hold. */
  add(body: { counters: Record<string, number>; histograms: Record<string, string> }): void {
    const c = body.counters;
    this.sent += c[COUNTERS.sent] ?? 0;
    this.lost += c[COUNTERS.lost] ?? 0;
    this.deliveriesExpected += c[COUNTERS.deliveriesExpected] ?? 0;
    this.deliveriesLost += c[COUNTERS.deliveriesLost] ?? 0;
    this.disconnects += c[COUNTERS.connectionsDropped] ?? 0;
    for (const [k, v] of Object.entries(c)) if (k.startsWith(ERROR_PREFIX)) this.errors += v;
    const encoded = body.histograms[this.metric];
    if (encoded) addEncoded((this.latency ??= createHistogram(64)), encoded);
  }

  /** Why the step broke stopWhen, or null. `awaitedAgesUs` are the ages of messages still awaited. */
  verdict(awaitedAgesUs: readonly number[]): string | null {
    if (awaitedAgesUs.length > 0) {
      this.latency ??= createHistogram(64);
      for (const age of awaitedAgesUs) recordMicros(this.latency, age);
    }
    return stopReason(this.plan.sweep?.stopWhen, {
      latency: this.latency,
      sent: this.sent,
      lost: this.lost,
      deliveriesExpected: this.deliveriesExpected,
      deliveriesLost: this.deliveriesLost,
      errors: this.errors,
      disconnects: this.disconnects,
    });
  }
}
