import { COUNTERS, errorCount, planTiming, sweepBeginMs, type Plan } from "@volley/contracts";
import { addEncoded, createHistogram, isMainLatency, mainLatencyMetric, recordMicros, stopReason, type Histogram } from "@volley/metrics";

/**
 * The slots of a sweep in time, in µs from the shard's start instant (whole numbers, so interval
 * boundaries compare exactly). Stepping begins on an interval boundary once every connection has
 * opened (or failed); slot j sends from begin + j·(warmup + hold + gap): first `warmup` at its rate,
 * left out of the step's judgement (a cold agent, pool or JIT says nothing about the server), then
 * `hold`, which is judged. A slot runs a planned step, or a step again (sweep.onSaturated: retry).
 * Only slots whose whole warm-up and hold fit in scenario.duration are planned, so a step is never
 * cut short by the plan itself.
 */
export class SweepPlan {
  /** The planned steps' rates (those that fit, were none retried). */
  readonly rates: number[];
  /** How many slots fit in scenario.duration. */
  readonly slots: number;
  readonly holdUs: number;
  readonly warmupUs: number;
  private readonly periodUs: number;
  private beginUs = -1;

  constructor(plan: Plan) {
    const t = planTiming(plan).sweep!;
    this.warmupUs = t.warmupMs * 1000;
    this.holdUs = t.holdMs * 1000;
    this.periodUs = t.periodMs * 1000;
    this.slots = t.slots;
    this.rates = t.rates;
  }

  get begun(): boolean {
    return this.beginUs >= 0;
  }

  /** Fixes the first slot's start: the first interval boundary (whole seconds) at or after `nowUs`. */
  begin(nowUs: number): void {
    this.beginUs = sweepBeginMs(nowUs / 1000) * 1000;
  }

  /** When slot j starts sending (its warm-up, if any). */
  sendStart(j: number): number {
    return this.beginUs + j * this.periodUs;
  }

  /** When slot j's judged hold starts. */
  holdStart(j: number): number {
    return this.sendStart(j) + this.warmupUs;
  }

  holdEnd(j: number): number {
    return this.holdStart(j) + this.holdUs;
  }

  /** The slot whose hold contains `tUs`, or -1 (ramp, warm-ups, gaps, after the last slot, or not begun). */
  stepAt(tUs: number): number {
    const j = this.slotAt(tUs);
    return j >= 0 && tUs >= this.holdStart(j) ? j : -1;
  }

  /** The slot whose warm-up or hold contains `tUs`, or -1. */
  slotAt(tUs: number): number {
    if (this.beginUs < 0 || tUs < this.beginUs) return -1;
    const j = Math.floor((tUs - this.beginUs) / this.periodUs);
    return j < this.slots && tUs < this.holdEnd(j) ? j : -1;
  }

  /** Whether `tUs` is in a slot's warm-up. */
  warmingUp(tUs: number): boolean {
    const j = this.slotAt(tUs);
    return j >= 0 && tUs < this.holdStart(j);
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
  /** Users: those that left during the hold, failed, and arrivals that found every user slot busy. */
  private usersLeft = 0;
  private usersFailed = 0;
  private usersDropped = 0;
  /** Judged intervals in which the agent flagged itself saturated, and why (first seen first). */
  private saturatedIntervals = 0;
  private intervals = 0;
  private readonly causes = new Set<string>();

  constructor(private readonly plan: Plan) {
    this.metric = mainLatencyMetric(plan.scenario);
  }

  /** Whether awaited messages' ages count as round trips (true) or deliveries (false); users' busy steps count as round trips. */
  get roundTrip(): boolean {
    return this.metric !== "delivery.latency";
  }

  /** A frame of the step's hold, with the agent's own saturation verdict on it and its causes. */
  add(body: { counters: Record<string, number>; histograms: Record<string, string> }, saturation?: { saturated: boolean; causes: readonly string[] }): void {
    this.intervals++;
    if (saturation?.saturated) {
      this.saturatedIntervals++;
      for (const cause of saturation.causes) this.causes.add(cause);
    }
    const c = body.counters;
    this.sent += c[COUNTERS.sent] ?? 0;
    this.lost += c[COUNTERS.lost] ?? 0;
    this.deliveriesExpected += c[COUNTERS.deliveriesExpected] ?? 0;
    this.deliveriesLost += c[COUNTERS.deliveriesLost] ?? 0;
    this.disconnects += c[COUNTERS.connectionsDropped] ?? 0;
    this.errors += errorCount(c);
    if (this.plan.scenario.kind === "users") {
      this.usersLeft += (c[COUNTERS.usersCompleted] ?? 0) + (c[COUNTERS.usersFailed] ?? 0);
      this.usersFailed += c[COUNTERS.usersFailed] ?? 0;
      this.usersDropped += c[COUNTERS.usersDropped] ?? 0;
      // Every timed step of every user is the users' latency.
      for (const [name, encoded] of Object.entries(body.histograms))
        if (isMainLatency(this.plan.scenario, name)) addEncoded((this.latency ??= createHistogram(64)), encoded);
      return;
    }
    const encoded = body.histograms[this.metric];
    if (encoded) addEncoded((this.latency ??= createHistogram(64)), encoded);
  }

  /**
   * Why the load generator, not the server, limited this step (the agent flagged itself saturated
   * in a judged interval: its sends went late or were shed, its latency includes its own delay), or
   * null. Such a step cannot decide the server's capacity either way.
   */
  generatorLimit(): string | null {
    // The step's rate was never offered: arrivals were turned away for want of a user slot.
    if (this.usersDropped > 0)
      return `${this.usersDropped} arrivals found all ${this.plan.connections.count} user slots busy (connections.count): raise connections.count`;
    if (this.saturatedIntervals === 0) return null;
    const why = this.causes.size > 0 ? [...this.causes].slice(0, 4).join(", ") : "it reported itself saturated";
    return `the agent was saturated in ${this.saturatedIntervals} of ${this.intervals} s: ${why}`;
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
      usersLeft: this.usersLeft,
      usersFailed: this.usersFailed,
    });
  }
}
