import { randomBytes } from "node:crypto";
import { COUNTERS, ERROR_PREFIX, HISTOGRAMS, durationMs, type Plan } from "@volley/contracts";
import { IntervalRecorder } from "@volley/metrics";
import { ConnectError, type ErrorClass } from "../drivers/connect-error";
import { connectOptionsFor } from "../drivers/connect-options";
import type { CloseInfo, Connection, Driver } from "../drivers/driver";
import { driverFor } from "../drivers/driver-for";
import { createArrival } from "./arrival";
import { systemClock, type Clock } from "./clock";
import { HealthMonitor, SATURATION } from "./health-monitor";
import { scenarioRoles, type ScenarioRoles } from "./scenario-roles";
import { SendSchedule } from "./send-schedule";
import { ShardAccounting } from "./shard-accounting";
import type { RunShardOptions, ShardOutcome, ShardStatus, ShardTotals } from "./types";

/** With no connection open after this many failed attempts, the shard errors instead of grinding through the ramp. */
const FAIL_FAST_ATTEMPTS = 100;
const S = 1_000_000;
const LATE_US = SATURATION.sendLagMs * 1000;

const enum State { Idle, Connecting, Open, Gone }

/**
 * One shard, open-loop. Connections are attempted at plan.connections.rate from the start instant;
 * every open connection sends on its own schedule of intended times (per: connection) or takes its
 * turn in one aggregate schedule (per: aggregate). A single timer loop sends everything whose
 * intended time has passed, so a late loop shows up as send lag and as latency — never as a
 * quietly lower rate. The run lasts ramp (count / rate) + duration, then waits for replies and
 * deliveries up to message.timeout.
 *
 * Scenarios differ only in roles (see scenario-roles): a room per connection (broadcast, groups:
 * every other member's copy is a delivery, timed from the intended send time), whether the
 * sender's own copy is a round trip, and the storm's canary, one extra connection (id = count)
 * on its own schedule and counters.
 */
export class ShardEngine {
  private readonly clock: Clock;
  private readonly driver: Driver | undefined;
  private readonly recorder = new IntervalRecorder();
  private readonly health = new HealthMonitor();
  private readonly accounting: ShardAccounting;
  private readonly schedule: SendSchedule;
  private readonly roles: ScenarioRoles;
  /** Storm only: the canary's id (count); -1 without one. */
  private readonly canaryId: number;
  private readonly count: number;
  /** count, plus the canary when there is one. */
  private readonly planned: number;
  private readonly attemptGapUs: number;
  private readonly intervalUs: number;
  private readonly warmupMs: number;

  private t0 = 0;
  private endUs = 0;
  private readonly state: Uint8Array;
  private readonly conns: (Connection | undefined)[] = [];

  private attempts = 0;
  private canaryAttempted = false;
  private inFlight = 0;
  private active = 0;
  private readonly failures = new Map<ErrorClass, { count: number; detail: string }>();
  private readonly totals: ShardTotals = { expected: 0, sent: 0, received: 0, lost: 0, duplicated: 0, opened: 0, failed: 0, closed: 0 };
  private frameIndex = 0;
  private frameStartUs = 0;
  private lagMaxUs = 0;
  private intervalSends = 0;
  private lateSends = 0;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private finished = false;
  private started = false;
  private resolveRun: (o: ShardOutcome) => void = () => {};

  constructor(private readonly plan: Plan, private readonly opts: RunShardOptions) {
    this.clock = opts.clock ?? systemClock();
    this.driver = opts.driver ?? driverFor(plan.target.protocol);
    const msg = plan.scenario.message;
    this.count = plan.connections.count;
    this.attemptGapUs = S / plan.connections.rate;
    this.intervalUs = S / msg.rate;
    this.schedule = new SendSchedule(msg.per === "connection", createArrival(msg.arrival, msg.rate, opts.random));
    this.roles = scenarioRoles(plan.scenario, opts.shard ?? randomBytes(4).toString("hex"));
    this.canaryId = this.roles.canaryRate === undefined ? -1 : this.count;
    this.accounting = new ShardAccounting(this.recorder, this.totals, this.roles, this.canaryId, msg.bytes, durationMs(msg.timeout) * 1000);
    this.planned = this.count + (this.canaryId >= 0 ? 1 : 0);
    this.warmupMs = durationMs(plan.scenario.warmup);
    this.state = new Uint8Array(this.planned);
  }

  async run(): Promise<ShardOutcome> {
    const { signal } = this.opts;
    if (!this.driver) return this.outcome("errored", `protocol "${this.plan.target.protocol}" is not supported by this agent`);
    if (signal?.aborted) return this.outcome("aborted", abortReason(signal));

    const nowMono = this.clock.monoUs();
    this.t0 = nowMono + (this.opts.startAt - this.clock.hubNowMs()) * 1000;
    const rampUs = this.count * this.attemptGapUs;
    this.endUs = this.t0 + rampUs + durationMs(this.plan.scenario.duration) * 1000;
    this.schedule.endUs = this.endUs;
    this.frameStartUs = this.t0;

    const done = new Promise<ShardOutcome>((resolve) => (this.resolveRun = resolve));
    const onAbort = () => this.finish("aborted", abortReason(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });
    this.waitUntil(this.t0, () => {
      const startedAt = this.clock.hubNowMs();
      this.started = true;
      this.health.sample(); // start the first interval's CPU and event-loop window at the start instant
      this.tick();
      // After the first tick: reporting must not delay the first sends.
      this.opts.onStart?.(startedAt);
    });
    const outcome = await done;
    signal?.removeEventListener("abort", onAbort);
    return outcome;
  }

  /** Sleeps on a timer, then spins the last ~2 ms on setImmediate so the start lands within a fraction of a ms. */
  private waitUntil(targetUs: number, then: () => void): void {
    const step = () => {
      if (this.finished) return;
      const remainingUs = targetUs - this.clock.monoUs();
      if (remainingUs <= 0) then();
      else if (remainingUs > 2000) this.timer = setTimeout(step, Math.floor(remainingUs / 1000) - 1);
      else this.immediate = setImmediate(step);
    };
    step();
  }

  private tick = (): void => {
    this.timer = undefined;
    if (this.finished) return;
    let now = this.clock.monoUs();

    while (now >= this.frameStartUs + S) this.emitFrame();

    // The canary connects first, so it is in place before the crowd arrives.
    if (this.canaryId >= 0 && !this.canaryAttempted) {
      this.canaryAttempted = true;
      this.attempt(this.canaryId);
    }
    while (this.attempts < this.count && this.t0 + this.attempts * this.attemptGapUs <= now) this.attempt(this.attempts++);

    this.schedule.due(now, this.isOpen, this.send);

    now = this.clock.monoUs();
    this.accounting.expire(now);

    if (this.drained(now)) return this.finish("completed");
    this.scheduleNext(now);
  };

  private readonly isOpen = (id: number): boolean => this.state[id] === State.Open;

  /** Past the end with no reply or delivery awaited and no connect attempt pending (one may still fail and make the shard errored). */
  private drained(now: number): boolean {
    return now >= this.endUs && this.accounting.outstanding === 0 && this.inFlight === 0;
  }

  private scheduleNext(now: number): void {
    let next = Math.min(this.frameStartUs + S, this.accounting.nextDeadline());
    if (now < this.endUs) {
      next = Math.min(next, this.endUs, this.schedule.nextDue());
      if (this.attempts < this.count) next = Math.min(next, this.t0 + this.attempts * this.attemptGapUs);
    }
    if (this.timer) clearTimeout(this.timer);
    // Rounding up means the loop rarely wakes early; the sub-ms it may wake late is recorded as send lag.
    this.timer = setTimeout(this.tick, Math.max(0, Math.ceil((next - now) / 1000)));
  }

  private attempt(id: number): void {
    this.state[id] = State.Connecting;
    this.inFlight++;
    const startedUs = this.clock.monoUs();
    const room = id === this.canaryId ? undefined : this.roles.roomFor(id);
    let connecting: Promise<Connection>;
    try {
      connecting = this.driver!.connect(connectOptionsFor(this.plan.target, room === undefined ? {} : { room }));
    } catch (err) {
      connecting = Promise.reject(err); // a driver that throws instead of rejecting is still just a failed attempt
    }
    connecting.then(
      (conn) => this.opened(id, conn, startedUs, room),
      (err: unknown) => this.failed(err),
    );
  }

  private opened(id: number, conn: Connection, startedUs: number, room: string | undefined): void {
    this.inFlight--;
    if (this.finished) return conn.close();
    const now = this.clock.monoUs();
    this.recorder.recordMicros(HISTOGRAMS.wsConnect, now - startedUs);
    this.recorder.increment(COUNTERS.connectionsOpened);
    this.totals.opened++;
    this.active++;
    this.state[id] = State.Open;
    this.conns[id] = conn;
    // connect() resolved once the server has it in the room: from now on it expects every member's message.
    this.accounting.opened(id, now, room);
    conn.onMessage((data) => this.onMessage(id, data));
    conn.onClose((info) => this.onClosed(id, info));
    if (now >= this.endUs) {
      if (this.drained(now)) this.finish("completed");
      return;
    }
    if (id === this.canaryId) this.schedule.open(id, now, createArrival("constant", this.roles.canaryRate!));
    else if (this.schedule.open(id, now)) this.addExpected(now);
    // Next microtask, not now: connections whose connects complete together are all in their rooms
    // before the first of them sends (its slot is still timed from the open, so any wait is send lag).
    queueMicrotask(this.tick);
  }

  private addExpected(fromUs: number): void {
    const span = this.endUs - fromUs;
    if (span <= 0) return;
    this.totals.expected += this.plan.scenario.message.arrival === "constant" ? Math.ceil(span / this.intervalUs) : span / this.intervalUs;
  }

  private failed(err: unknown): void {
    this.inFlight--;
    if (this.finished) return;
    const errorClass: ErrorClass = err instanceof ConnectError ? err.errorClass : "other";
    const detail = err instanceof ConnectError ? err.detail : String(err);
    this.recorder.increment(COUNTERS.connectionsFailed);
    this.recorder.increment(ERROR_PREFIX + errorClass);
    this.totals.failed++;
    const seen = this.failures.get(errorClass);
    if (seen) seen.count++;
    else this.failures.set(errorClass, { count: 1, detail });

    const allFailed = this.totals.failed === this.planned || this.totals.failed >= FAIL_FAST_ATTEMPTS;
    if (this.totals.opened === 0 && allFailed) this.finish("errored", this.connectFailureReason());
    else if (this.drained(this.clock.monoUs())) this.finish("completed");
  }

  /** "connect refused: ws://127.0.0.1:9/echo (ECONNREFUSED) — 50 of 50 attempts failed", naming the commonest class. */
  private connectFailureReason(): string {
    const [errorClass, worst] = [...this.failures.entries()].sort((a, b) => b[1].count - a[1].count)[0]!;
    const attempts = this.attempts + (this.canaryAttempted ? 1 : 0);
    const planned = attempts < this.planned ? ` (stopped early: none of ${this.planned} planned connections opened)` : "";
    return `connect ${errorClass}: ${this.plan.target.url} (${worst.detail}) — ${this.totals.failed} of ${attempts} attempts failed${planned}`;
  }

  private readonly send = (id: number, intendedUs: number): void => {
    this.conns[id]!.send(this.accounting.message(id, intendedUs));
    const lag = this.clock.monoUs() - intendedUs;
    this.recorder.recordMicros(HISTOGRAMS.sendLag, lag);
    if (lag > this.lagMaxUs) this.lagMaxUs = lag;
    if (lag > LATE_US) this.lateSends++;
    this.intervalSends++;
  };

  private onMessage(id: number, data: Buffer | string): void {
    if (this.finished) return;
    const now = this.clock.monoUs();
    this.accounting.received(id, data, now);
    if (this.drained(now)) this.finish("completed");
  }

  private onClosed(id: number, info: CloseInfo): void {
    if (this.finished || this.state[id] !== State.Open) return;
    this.state[id] = State.Gone;
    this.conns[id] = undefined;
    this.active--;
    this.recorder.increment(COUNTERS.connectionsClosed);
    this.totals.closed++;
    if (info.byServer) {
      this.recorder.increment(COUNTERS.connectionsDropped);
      this.recorder.increment(ERROR_PREFIX + (info.errorClass ?? "closed"));
    }
    this.schedule.close(id);
    this.accounting.closed(id);
  }

  /** Emits the current interval: a full second, or (given where it ends) the final partial one. */
  private emitFrame(partialEndUs?: number): void {
    this.recorder.setGauge(COUNTERS.connectionsActive, this.active);
    const body = this.recorder.take();
    const lateShare = this.intervalSends > 0 ? this.lateSends / this.intervalSends : 0;
    const health = this.health.sample({ maxMs: this.lagMaxUs / 1000, lateShare });
    this.lagMaxUs = this.intervalSends = this.lateSends = 0;
    const index = this.frameIndex++;
    this.opts.onFrame({
      index,
      startedAt: this.opts.startAt + index * 1000,
      durationMs: partialEndUs === undefined ? 1000 : Math.max(0.001, (partialEndUs - this.frameStartUs) / 1000),
      warmup: index * 1000 < this.warmupMs,
      counters: body.counters,
      histograms: body.histograms,
      health,
    });
    // From t0 each time, never accumulated, so boundaries stay exact to the start instant.
    this.frameStartUs = this.t0 + this.frameIndex * S;
  }

  private finish(status: ShardStatus, error?: string): void {
    if (this.finished) return;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.finished = true;
    this.timer = undefined;
    if (!this.started) return this.resolveRun(this.outcome(status, error));

    // Replies still awaited when the wait is over are lost; on abort nobody waited, so they stay uncounted.
    if (status !== "aborted") this.accounting.abandonAll();
    for (let id = 0; id < this.conns.length; id++) {
      const conn = this.conns[id];
      if (!conn) continue;
      conn.close();
      this.conns[id] = undefined;
      this.state[id] = State.Gone;
      this.recorder.increment(COUNTERS.connectionsClosed);
      this.totals.closed++;
    }
    this.active = 0;
    const now = this.clock.monoUs();
    while (now >= this.frameStartUs + S) this.emitFrame();
    this.emitFrame(now);
    this.resolveRun(this.outcome(status, error));
  }

  private outcome(status: ShardStatus, error?: string): ShardOutcome {
    this.finished = true;
    this.health.stop();
    return { status, ...(error ? { error } : {}), frames: this.frameIndex, totals: { ...this.totals, expected: Math.round(this.totals.expected) } };
  }
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (typeof r === "string") return r;
  if (r instanceof Error && r.name !== "AbortError") return r.message;
  return "aborted";
}
