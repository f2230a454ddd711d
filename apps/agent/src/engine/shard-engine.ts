import { COUNTERS, ERROR_PREFIX, HISTOGRAMS, durationMs, type Plan } from "@volley/contracts";
import { IntervalRecorder } from "@volley/metrics";
import { ConnectError, type ErrorClass } from "../drivers/connect-error";
import type { CloseInfo, Connection, Driver } from "../drivers/driver";
import { driverFor } from "../drivers/driver-for";
import { createArrival, type Arrival } from "./arrival";
import { systemClock, type Clock } from "./clock";
import { HealthMonitor, SATURATION } from "./health-monitor";
import { decodeMessage, encodeMessage } from "./message-codec";
import { MinHeap } from "./min-heap";
import { PendingTracker, REPLY } from "./pending-tracker";
import type { RunShardOptions, ShardOutcome, ShardStatus, ShardTotals } from "./types";

/** Not in COUNTERS (yet): replies seen twice for one message. */
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
 * quietly lower rate. The run lasts ramp (count / rate) + duration, then waits for replies up to
 * message.timeout.
 */
export class ShardEngine {
  private readonly clock: Clock;
  private readonly driver: Driver | undefined;
  private readonly recorder = new IntervalRecorder();
  private readonly health = new HealthMonitor();
  private readonly tracker: PendingTracker;
  private readonly arrival: Arrival;
  private readonly heap = new MinHeap();
  private readonly count: number;
  private readonly attemptGapUs: number;
  private readonly bytes: number;
  private readonly perConnection: boolean;
  private readonly intervalUs: number;
  private readonly warmupMs: number;
  private readonly connectTimeoutMs: number;

  private t0 = 0;
  private endUs = 0;
  private readonly state: Uint8Array;
  private readonly conns: (Connection | undefined)[] = [];
  private readonly schedT0: number[] = [];
  private readonly schedK: number[] = [];
  private readonly seqs: number[] = [];
  /** Highest sequence answered per connection, to count replies that arrive out of order. */
  private readonly newestReply: number[] = [];
  /** Open connection ids for round-robin in aggregate mode; position kept for O(1) removal. */
  private readonly openList: number[] = [];
  private readonly openPos: number[] = [];
  private rr = 0;
  private aggT0 = -1;
  private aggK = 0;
  private aggDue = Infinity;

  private attempts = 0;
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
    this.bytes = msg.bytes;
    this.perConnection = msg.per === "connection";
    this.intervalUs = S / msg.rate;
    this.arrival = createArrival(msg.arrival, msg.rate, opts.random);
    this.tracker = new PendingTracker(durationMs(msg.timeout) * 1000);
    this.warmupMs = durationMs(plan.scenario.warmup);
    this.connectTimeoutMs = durationMs(plan.target.connectTimeout);
    this.state = new Uint8Array(this.count);
  }

  async run(): Promise<ShardOutcome> {
    const { signal } = this.opts;
    if (!this.driver) return this.outcome("errored", `protocol "${this.plan.target.protocol}" is not supported by this agent`);
    if (signal?.aborted) return this.outcome("aborted", abortReason(signal));

    const nowMono = this.clock.monoUs();
    this.t0 = nowMono + (this.opts.startAt - this.clock.hubNowMs()) * 1000;
    const rampUs = this.count * this.attemptGapUs;
    this.endUs = this.t0 + rampUs + durationMs(this.plan.scenario.duration) * 1000;
    this.frameStartUs = this.t0;

    const done = new Promise<ShardOutcome>((resolve) => (this.resolveRun = resolve));
    const onAbort = () => this.finish("aborted", abortReason(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });
    this.waitUntil(this.t0, () => {
      this.started = true;
      this.health.sample(); // start the first interval's CPU and event-loop window at the start instant
      this.tick();
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

    while (this.attempts < this.count && this.t0 + this.attempts * this.attemptGapUs <= now) this.attempt(this.attempts++);

    if (this.perConnection) this.sendPerConnection(now);
    else this.sendAggregate(now);

    now = this.clock.monoUs();
    const lost = this.tracker.expire(now);
    if (lost > 0) this.countLost(lost);

    if (this.drained(now)) return this.finish("completed");
    this.scheduleNext(now);
  };

  /** Past the end with no reply awaited and no connect attempt pending (one may still fail and make the shard errored). */
  private drained(now: number): boolean {
    return now >= this.endUs && this.tracker.outstanding === 0 && this.inFlight === 0;
  }

  private scheduleNext(now: number): void {
    let next = Math.min(this.frameStartUs + S, this.tracker.nextDeadline());
    if (now < this.endUs) {
      next = Math.min(next, this.endUs, this.perConnection ? this.heap.peekKey() : this.aggDue);
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
    const target = this.plan.target;
    let connecting: Promise<Connection>;
    try {
      connecting = this.driver!.connect({
        url: target.url,
        headers: target.headers,
        connectTimeoutMs: this.connectTimeoutMs,
        socketio: target.socketio,
        sockjs: target.sockjs,
      });
    } catch (err) {
      connecting = Promise.reject(err); // a driver that throws instead of rejecting is still just a failed attempt
    }
    connecting.then(
      (conn) => this.opened(id, conn, startedUs),
      (err: unknown) => this.failed(err),
    );
  }

  private opened(id: number, conn: Connection, startedUs: number): void {
    this.inFlight--;
    if (this.finished) return conn.close();
    const now = this.clock.monoUs();
    this.recorder.recordMicros(HISTOGRAMS.wsConnect, now - startedUs);
    this.recorder.increment(COUNTERS.connectionsOpened);
    this.totals.opened++;
    this.active++;
    this.state[id] = State.Open;
    this.conns[id] = conn;
    this.seqs[id] = 0;
    conn.onMessage((data) => this.onReply(id, data));
    conn.onClose((info) => this.onClosed(id, info));
    if (now >= this.endUs) {
      if (this.drained(now)) this.finish("completed");
      return;
    }

    if (this.perConnection) {
      this.schedT0[id] = now;
      this.schedK[id] = 0;
      this.addExpected(now);
      this.heap.push(id, this.arrival.next(0, now, now));
    } else {
      this.openPos[id] = this.openList.length;
      this.openList.push(id);
      if (this.aggT0 < 0) {
        this.aggT0 = now;
        this.aggDue = this.arrival.next(0, now, now);
        this.addExpected(now);
      }
    }
    this.tick();
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

    const allFailed = this.totals.failed === this.count || this.totals.failed >= FAIL_FAST_ATTEMPTS;
    if (this.totals.opened === 0 && allFailed) this.finish("errored", this.connectFailureReason());
    else if (this.drained(this.clock.monoUs())) this.finish("completed");
  }

  /** "connect refused: ws://127.0.0.1:9/echo (ECONNREFUSED) — 50 of 50 attempts failed", naming the commonest class. */
  private connectFailureReason(): string {
    const [errorClass, worst] = [...this.failures.entries()].sort((a, b) => b[1].count - a[1].count)[0]!;
    const planned = this.attempts < this.count ? ` (stopped early: none of ${this.count} planned connections opened)` : "";
    return `connect ${errorClass}: ${this.plan.target.url} (${worst.detail}) — ${this.totals.failed} of ${this.attempts} attempts failed${planned}`;
  }

  private sendPerConnection(now: number): void {
    const heap = this.heap;
    while (heap.peekKey() <= now) {
      const intended = heap.peekKey();
      const id = heap.pop()!;
      if (this.state[id] !== State.Open) continue;
      this.send(id, intended);
      const k = ++this.schedK[id]!;
      const next = this.arrival.next(k, this.schedT0[id]!, intended);
      if (next < this.endUs) heap.push(id, next);
    }
  }

  private sendAggregate(now: number): void {
    while (this.aggDue <= now && this.aggDue < this.endUs) {
      // With every connection gone, the slot passes unsent: there is nobody to send it on.
      if (this.openList.length > 0) this.send(this.openList[this.rr++ % this.openList.length]!, this.aggDue);
      this.aggDue = this.arrival.next(++this.aggK, this.aggT0, this.aggDue);
    }
    if (this.aggDue >= this.endUs) this.aggDue = Infinity;
  }

  private send(id: number, intendedUs: number): void {
    const seq = this.seqs[id]!;
    this.seqs[id] = seq + 1;
    this.tracker.add(id, seq, intendedUs);
    this.conns[id]!.send(encodeMessage(id, seq, intendedUs, this.bytes));
    const lag = this.clock.monoUs() - intendedUs;
    this.recorder.recordMicros(HISTOGRAMS.sendLag, lag);
    if (lag > this.lagMaxUs) this.lagMaxUs = lag;
    if (lag > LATE_US) this.lateSends++;
    this.intervalSends++;
    this.recorder.increment(COUNTERS.sent);
    this.totals.sent++;
  }

  private onReply(id: number, data: Buffer | string): void {
    if (this.finished) return;
    const now = this.clock.monoUs();
    const msg = decodeMessage(data);
    const intended = msg && msg.connId === id ? this.tracker.resolve(id, msg.seq) : REPLY.unknown;
    if (intended >= 0) {
      const newest = this.newestReply[id] ?? -1;
      if (msg!.seq < newest) this.recorder.increment(COUNTERS.outOfOrder);
      else this.newestReply[id] = msg!.seq;
      this.recorder.recordMicros(HISTOGRAMS.messageLatency, now - intended);
      this.recorder.increment(COUNTERS.received);
      this.totals.received++;
      if (this.drained(now)) this.finish("completed");
    } else if (intended === REPLY.duplicate) {
      this.recorder.increment(COUNTERS.duplicated);
      this.totals.duplicated++;
    } else if (intended === REPLY.unknown) {
      this.recorder.increment(ERROR_PREFIX + "protocol");
    }
    // REPLY.late: already counted lost at its deadline; counting it again would double-count.
  }

  private onClosed(id: number, info: CloseInfo): void {
    if (this.finished || this.state[id] !== State.Open) return;
    this.state[id] = State.Gone;
    this.conns[id] = undefined;
    this.active--;
    this.recorder.increment(COUNTERS.connectionsClosed);
    this.totals.closed++;
    if (info.byServer) this.recorder.increment(ERROR_PREFIX + (info.errorClass ?? "closed"));
    if (!this.perConnection) this.removeFromOpenList(id);
    const lost = this.tracker.abandonConnection(id);
    if (lost > 0) this.countLost(lost);
  }

  private removeFromOpenList(id: number): void {
    const pos = this.openPos[id]!;
    const last = this.openList.pop()!;
    if (last !== id) {
      this.openList[pos] = last;
      this.openPos[last] = pos;
    }
  }

  private countLost(n: number): void {
    this.recorder.increment(COUNTERS.lost, n);
    this.totals.lost += n;
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
    if (status !== "aborted") {
      const lost = this.tracker.abandonAll();
      if (lost > 0) this.countLost(lost);
    }
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
