import { randomBytes } from "node:crypto";
import {
  COUNTERS,
  connectionsControlRefusal,
  HISTOGRAMS,
  durationMs,
  planTiming,
  rateControlRefusal,
  type Plan,
  type PlanTiming,
  type Reconnect,
} from "@volley/contracts";
import { IntervalRecorder } from "@volley/metrics";
import { publicOnlyLookup } from "@volley/contracts/public-lookup";
import { connectOptionsFor } from "../drivers/connect-options";
import type { CloseInfo, Connection, Driver } from "../drivers/driver";
import { compileFlow } from "../flow/flow-program";
import { FlowShard } from "../flow/flow-shard";
import { createArrival } from "./arrival";
import { systemClock, type Clock } from "./clock";
import { ClosedLoop } from "./closed-loop";
import { ConnectFailures } from "./connect-failures";
import { LivePopulation } from "./live-population";
import { closeText, connectErrorText } from "./error-text";
import { PreciseWake } from "./precise-wake";
import { SoonestTwo } from "./soonest-two";
import type { LiveRate } from "./rate-feed";
import { scenarioRoles, type ScenarioRoles } from "./scenario-roles";
import { SendSchedule } from "./send-schedule";
import { SendTurn, SHED_LAG_US, type SlotSink } from "./send-turn";
import { sourceAddressFor } from "./source-addresses";
import { ShardAccounting } from "./shard-accounting";
import { ShardFrames } from "./shard-frames";
import { StagePopulation } from "./stage-population";
import { SweepStepper } from "./sweep-stepper";
import { refusedTarget } from "./target-guard";
import type { RunShardOptions, ShardOutcome, ShardStatus, ShardTotals } from "./types";

/** With no connection open after this many failed attempts, the shard errors instead of grinding through the ramp. */
const FAIL_FAST_ATTEMPTS = 100;
const S = 1_000_000;

/** Retiring: a falling stage is closing it; it sends no more and waits for its last replies. */
const enum State {
  Idle,
  Connecting,
  Open,
  Retiring,
  Gone,
}

/**
 * One shard, open-loop. Connections are attempted at plan.connections.rate from the start instant;
 * every open connection sends on its own schedule of intended times (per: connection) or takes its
 * turn in one aggregate schedule (per: aggregate). A single timer loop sends everything whose
 * intended time has passed, so a late loop shows up as send lag and as latency — never as a
 * quietly lower rate. Each turn of that loop sends for at most a time slice and then yields to I/O
 * (replies, the hub's heartbeats and abort). When the backlog outlasts a turn, a slot already
 * SHED_LAG_US late (or message.timeout, if shorter) is shed: counted in `messages.shed` with its lag, never sent and never silently
 * skipped, and its frame is flagged saturated. How long the run lasts is contracts' planTiming (ramp (count / rate) +
 * duration; per aggregate: duration from the first open; stages: their total; sweep: to its last step), then it waits
 * for replies and deliveries up to message.timeout.
 *
 * Scenarios differ only in roles (see scenario-roles): a room per connection (broadcast, groups:
 * every other member's copy is a delivery, timed from the intended send time), whether the
 * sender's own copy is a round trip, and the storm's canary, one extra connection (id = count)
 * on its own schedule and counters.
 *
 * With connections.stages, StagePopulation opens and retires connections along the stage line
 * instead of count/rate (a retiring connection no longer counts in connections.active); each
 * connection sends from its open for at most `duration`, and the run lasts the stages' total.
 *
 * With a sweep, connections open first at connections.rate, then SweepStepper steps the rate.
 */
export class ShardEngine {
  private readonly clock: Clock;
  private readonly driver: Driver | undefined;
  private readonly recorder = new IntervalRecorder();
  private readonly accounting: ShardAccounting;
  private readonly frames: ShardFrames;
  private readonly schedule: SendSchedule;
  private readonly stages: StagePopulation | undefined;
  /** Without stages: the connections to attempt, which a live connections change moves. */
  private readonly live: LivePopulation | undefined;
  private connectionsChange: { scale: number; atUs: number } | undefined;
  /** Sweep: steps have schedules of their own (the run's `schedule` then carries only the canary). */
  private readonly sweep: SweepStepper | undefined;
  private readonly durationUs: number;
  private readonly timing: PlanTiming;
  private readonly roles: ScenarioRoles;
  /** Storm only: the canary's id (count); -1 without one. */
  private readonly canaryId: number;
  private readonly count: number;
  /** count, plus the canary when there is one. */
  private readonly planned: number;
  private readonly attemptGapUs: number;
  /** The schedule's gap between slots now: the plan's, or a live rate change's. */
  private intervalUs: number;
  /** A live rate change not yet applied: its scale and instant (mono µs). */
  private rateChange: { scale: number; atUs: number } | undefined;
  private rateScale = 1;
  private readonly warmupMs: number;
  /** Hosted mode: every connection's sockets resolve through the public-only lookup. */
  private readonly lookup: { lookup?: ReturnType<typeof publicOnlyLookup> };
  /** plan.flow: setup steps, rendered messages, matched replies (see flow/). */
  private readonly flow: FlowShard | undefined;
  /** http-rps `loop: closed`: users send on replies, not on the schedule (see closed-loop.ts). */
  private readonly closed: ClosedLoop | undefined;
  /** http-rps `requests`: slots this shard may still send or shed; Infinity without an exact count. */
  private remaining = Infinity;
  /** connections.reconnect (per-connection schedules only; validation refuses the rest). */
  private readonly reconnect: Reconnect | undefined;
  /** Per connection: the end of its sending window, which a reconnect continues. */
  private readonly windowEnd: number[] = [];
  /** Connections the server closed that are reconnecting: the slots they still had, the drop instant, tries so far. */
  private readonly down = new Map<number, { droppedUs: number; remaining: number; attempts: number; waitUs: number; timer?: NodeJS.Timeout }>();

  private t0 = 0;
  private endUs = 0;
  /** Per aggregate: the end of the one sending window (duration from the first open), when the ramp outlasts it. */
  private sendEndUs = Infinity;
  private state: Uint8Array;
  private readonly conns: (Connection | undefined)[] = [];

  private attempts = 0;
  private canaryAttempted = false;
  private inFlight = 0;
  private active = 0;
  private readonly failures = new ConnectFailures();
  private readonly totals: ShardTotals = { expected: 0, sent: 0, received: 0, lost: 0, shed: 0, duplicated: 0, opened: 0, failed: 0, closed: 0 };
  private readonly turn: SendTurn;
  private readonly sink: SlotSink;
  /** Wakes the engine for its start instant, then for each next due moment (a send, a frame, a deadline). */
  private readonly wakeAt: PreciseWake;
  private readonly soonest = new SoonestTwo();
  private onWake: () => void = () => {};
  /** When the next tick is due: an event arriving later runs it right after its I/O, ahead of the wake-up. */
  private nextTickUs = Infinity;
  /** The next turn, queued for after I/O: a turn that spent its slice, or connections opened or settled. */
  private nextTurn: NodeJS.Immediate | undefined;
  private finished = false;
  private started = false;
  private resolveRun: (o: ShardOutcome) => void = () => {};

  constructor(
    private readonly plan: Plan,
    private readonly opts: RunShardOptions,
  ) {
    this.clock = opts.clock ?? systemClock();
    this.wakeAt = new PreciseWake(
      () => this.clock.monoUs(),
      () => this.onWake(),
    );
    this.driver = opts.driver;
    this.lookup = opts.publicOnly ? { lookup: publicOnlyLookup() } : {};
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
    this.turn = new SendTurn(() => this.clock.monoUs(), Math.min(SHED_LAG_US, durationMs(msg.timeout) * 1000));
    this.sink = { isOpen: this.isOpen, send: this.sendSlot, shed: this.shedSlot, turn: this.turn };
    this.state = new Uint8Array(this.planned);
    this.timing = planTiming(plan);
    this.durationUs = this.timing.durationMs * 1000;
    const { stages } = plan.connections;
    if (stages)
      this.stages = new StagePopulation(
        stages,
        this.populationHost,
        this.canaryId,
        msg.arrival === "constant",
        this.intervalUs,
        durationMs(msg.timeout) * 1000,
      );
    else
      this.live = new LivePopulation(
        this.count,
        { ...this.populationHost, unsentOf: (id, nowUs) => this.schedule.unsentOf(id, nowUs, this.intervalUs, msg.arrival === "constant") },
        () => this.t0,
        this.attemptGapUs,
        durationMs(msg.timeout) * 1000,
      );
    if (plan.sweep) this.sweep = new SweepStepper(plan, this.stepperHost, opts.random);
    this.frames = new ShardFrames(this.recorder, opts, this.warmupMs, this.sweep, this.stages);
    const s = plan.scenario;
    if (s.kind === "http-rps" && s.requests !== undefined) this.remaining = s.requests;
    if (s.kind === "http-rps" && s.loop === "closed") {
      const minGapUs = msg.per === "connection" ? S / msg.rate : (S * this.count) / msg.rate;
      const host = { isOpen: this.isOpen, send: this.sendReady, awaits: (id: number, seq: number) => this.accounting.awaits(id, seq), turn: this.turn };
      this.closed = new ClosedLoop(host, durationMs(s.thinkTime) * 1000, minGapUs, durationMs(msg.timeout) * 1000);
      this.accounting.closedLoop();
      this.frames.closedLoop = true;
    }
    this.reconnect = plan.connections.reconnect;
    const program = compileFlow(plan);
    if (program && this.driver) {
      this.accounting.useFlow(program, opts.random ?? Math.random);
      this.flow = new FlowShard(
        plan,
        program,
        this.driver,
        this.recorder,
        this.accounting,
        () => this.clock.monoUs(),
        this.lookup.lookup,
        durationMs(plan.target.connectTimeout),
        this.afterReply,
      );
    }
  }

  async run(): Promise<ShardOutcome> {
    const { signal } = this.opts;
    if (!this.driver) return this.outcome("errored", `protocol "${this.plan.target.protocol}" is not supported by this agent`);
    if (signal?.aborted) return this.outcome("aborted", abortReason(signal));
    const refused = this.opts.publicOnly ? await refusedTarget(this.plan.target.url) : null;
    if (refused) return this.outcome("errored", refused);

    const nowMono = this.clock.monoUs();
    this.t0 = nowMono + (this.opts.startAt - this.clock.hubNowMs()) * 1000;
    // A sweep's end is known once stepping begins (and earlier if a step breaks stopWhen).
    if (this.sweep) this.endUs = Infinity;
    else this.endUs = this.t0 + this.timing.sendEndMs * 1000;
    this.schedule.endUs = this.endUs;
    // An exact count split finer than this shard (fewer requests than agents or threads) may leave it none.
    if (this.remaining === 0) this.endUs = this.schedule.endUs = this.t0;
    if (this.closed) this.closed.endUs = this.endUs;
    this.frames.begin(this.t0);

    // The sleeper thread starts while the shard arms, before the start instant needs it.
    this.wakeAt.prepare();
    const done = new Promise<ShardOutcome>((resolve) => (this.resolveRun = resolve));
    const onAbort = () => this.finish("aborted", abortReason(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });
    this.opts.rate?.listen(this.onRate);
    this.waitUntil(this.t0, () => {
      const startedAt = this.clock.hubNowMs();
      this.started = true;
      this.frames.started();
      this.tick();
      // After the first tick: reporting must not delay the first sends.
      this.opts.onStart?.(startedAt);
    });
    const outcome = await done;
    signal?.removeEventListener("abort", onAbort);
    return outcome;
  }

  /** Runs `then` at the start instant, to within tens of µs; from then on every wake-up is a tick. */
  private waitUntil(targetUs: number, then: () => void): void {
    this.onWake = () => {
      this.onWake = this.tick;
      if (!this.finished) then();
    };
    this.wakeAt.at(targetUs);
  }

  private tick = (): void => {
    // A tick may come from the wake-up, a queued turn or an event: whichever, it replaces the others.
    this.wakeAt.cancel();
    this.nextTickUs = Infinity;
    if (this.nextTurn) clearImmediate(this.nextTurn);
    this.nextTurn = undefined;
    if (this.finished) return;
    let now = this.clock.monoUs();
    this.turn.begin(now);

    // A hold's slots go out before its last interval closes, so a late wake-up still counts them in the hold.
    if (this.sweep) {
      if (!this.sweep.begun && this.attempts >= this.count && this.inFlight === 0) this.sweep.begin(this.t0, now);
      // Only slots of the closing interval: a hold's first slot, due on the boundary, belongs to the hold, not its warm-up.
      this.sweep.due(Math.min(now, this.frames.nextUs - 0.001), this.sink);
    }
    while (now >= this.frames.nextUs) {
      this.emitFrame();
      this.sweep?.startDue(this.frames.index * S);
    }
    this.sweep?.startDue(this.frames.index * S);

    // The canary connects first, so it is in place before the crowd arrives.
    if (this.canaryId >= 0 && !this.canaryAttempted) {
      this.canaryAttempted = true;
      this.attempt(this.canaryId);
    }
    if (this.stages) this.stages.follow(now - this.t0, now);
    else {
      if (this.connectionsChange && now >= this.connectionsChange.atUs) this.applyConnections(this.connectionsChange);
      const live = this.live!;
      while (this.attempts < live.limit && live.attemptAt(this.attempts) <= now) this.attempt(this.grown(this.attempts++));
    }

    if (this.rateChange && now >= this.rateChange.atUs) this.applyRate(this.rateChange);
    this.schedule.due(now, this.sink);
    this.sweep?.due(now, this.sink);

    now = this.clock.monoUs();
    this.accounting.expire(now);
    this.closed?.due(now);
    this.stages?.settle(now);
    this.live?.settle(now);

    if (this.drained(now)) return this.finish("completed");
    // Slots are still due: carry on right after this turn's I/O, not a timer's millisecond later.
    if (this.turn.exhausted) return this.wake();
    this.scheduleNext(now);
  };

  /** Runs a tick at the next turn of the event loop, after its I/O; once, however often asked. */
  private wake(): void {
    this.nextTurn ??= setImmediate(this.tick);
  }

  private readonly isOpen = (id: number): boolean => this.state[id] === State.Open;

  /** `id`, with the connection states grown to hold it (stages and live changes add ids past the plan's count). */
  private grown(id: number): number {
    if (id >= this.state.length) {
      const grown = new Uint8Array(Math.max(id + 1, this.state.length * 2));
      grown.set(this.state);
      this.state = grown;
    }
    return id;
  }

  private readonly populationHost = {
    attempt: (id: number) => {
      this.attempts = this.stages!.attempts;
      this.attempt(this.grown(id));
    },
    isConnecting: (id: number) => this.state[id] === State.Connecting,
    isOpen: this.isOpen,
    retire: (id: number, unsent: number) => {
      this.state[id] = State.Retiring;
      this.active--;
      this.schedule.close(id);
      this.totals.expected -= unsent;
      this.accounting.retire(id);
    },
    outstandingFor: (id: number) => this.accounting.outstandingFor(id),
    close: (id: number) => {
      const conn = this.conns[id];
      this.conns[id] = undefined;
      this.state[id] = State.Gone;
      this.recorder.increment(COUNTERS.connectionsClosed);
      this.totals.closed++;
      this.accounting.closed(id);
      conn?.close();
    },
  };

  private readonly stepperHost = {
    openIds: () => {
      const ids: number[] = [];
      for (let id = 0; id < this.count; id++) if (this.state[id] === State.Open) ids.push(id);
      return ids;
    },
    addExpected: (fromUs: number, untilUs: number, intervalUs: number) => void this.addExpected(fromUs, untilUs, intervalUs),
    setEnd: (endUs: number) => {
      this.endUs = endUs;
      this.schedule.endUs = endUs;
    },
    awaitedAges: (roundTrip: boolean) => this.accounting.awaitedAges(this.clock.monoUs(), roundTrip),
  };

  /**
   * Past the end with no reply or delivery awaited, no connect attempt pending (one may still fail
   * and make the shard errored) and no slot due before the end still unsent: a wake-up late past
   * the end (a busy or preempted agent) still sends those, late and timed from their intended
   * instants, rather than ending on a reply that happened to arrive first.
   */
  private drained(now: number): boolean {
    return (
      now >= this.endUs &&
      this.accounting.outstanding === 0 &&
      this.inFlight === 0 &&
      this.down.size === 0 &&
      this.schedule.nextDue() >= this.endUs &&
      (this.sweep?.nextDue() ?? Infinity) >= this.endUs &&
      (this.closed?.nextReady() ?? Infinity) >= this.endUs
    );
  }

  private scheduleNext(now: number): void {
    // Slots due before the end count even after it (drained waits for them), so they always wake the loop.
    // The second soonest predicts the wake-up after this one (usually the next send after the next).
    const soonest = this.soonest
      .reset()
      .add(this.frames.nextUs)
      .add(this.accounting.nextDeadline())
      .add(this.schedule.nextDue())
      .add(this.schedule.afterNextDue())
      .add(this.sweep?.nextDue() ?? Infinity)
      .add(this.closed?.nextDue() ?? Infinity);
    if (this.rateChange) soonest.add(this.rateChange.atUs);
    if (this.connectionsChange) soonest.add(this.connectionsChange.atUs);
    if (this.live) soonest.add(this.live.nextDeadline());
    if (now < this.endUs) {
      soonest.add(this.endUs);
      if (this.live && this.attempts < this.live.limit) soonest.add(this.live.attemptAt(this.attempts));
    }
    if (this.stages) soonest.add(this.stages.nextDeadline(this.t0, now));
    this.nextTickUs = soonest.first;
    this.wakeAt.at(soonest.first, soonest.second);
  }

  private attempt(id: number): void {
    this.state[id] = State.Connecting;
    this.inFlight++;
    const startedUs = this.clock.monoUs();
    const room = id === this.canaryId ? undefined : this.roles.roomFor(id);
    let connecting: Promise<{ conn: Connection; connectUs?: number; early?: { event: string | undefined; data: unknown }[] }>;
    try {
      const local = { ...sourceAddressFor(this.opts.sourceAddresses, id), ...this.lookup };
      // A flow joins rooms its own way (its setup steps, with {{ conn.room }}); the driver's join is for Volley's targets.
      if (this.flow) connecting = this.flow.open(id, room, connectOptionsFor(this.plan.target, local, true));
      else connecting = this.driver!.connect(connectOptionsFor(this.plan.target, room === undefined ? local : { room, ...local })).then((conn) => ({ conn }));
    } catch (err) {
      connecting = Promise.reject(err); // a driver that throws instead of rejecting is still just a failed attempt
    }
    connecting.then(
      ({ conn, connectUs, early }) => this.opened(id, conn, connectUs ?? this.clock.monoUs() - startedUs, room, early),
      (err: unknown) => this.failed(err, id),
    );
  }

  /** `connectUs`: the connect alone (a flow's setup steps are timed as their own metrics). */
  private opened(id: number, conn: Connection, connectUs: number, room: string | undefined, early?: { event: string | undefined; data: unknown }[]): void {
    this.inFlight--;
    if (this.finished) return conn.close();
    const now = this.clock.monoUs();
    this.recorder.recordMicros(HISTOGRAMS.wsConnect, connectUs);
    const down = this.down.get(id);
    // A reconnect is the same connection coming back: counted as reconnected, not opened again.
    if (!down) {
      this.recorder.increment(COUNTERS.connectionsOpened);
      this.totals.opened++;
    }
    this.active++;
    this.state[id] = State.Open;
    this.conns[id] = conn;
    // connect() resolved once the server has it in the room: from now on it expects every member's message.
    this.accounting.opened(id, now, room);
    if (this.flow) {
      conn.onEvent!((event, data) => this.onEvent(id, event, data));
      // What reached it during its setup and no step consumed (a member's broadcast) counts now.
      for (const m of early ?? []) this.accounting.receivedEvent(id, m.event, m.data, now);
    } else conn.onMessage((data) => this.onMessage(id, data));
    conn.onClose((info) => this.onClosed(id, info));
    conn.onSocketConnect?.((us) => {
      if (!this.finished) this.recorder.recordMicros(HISTOGRAMS.httpConnect, us);
    });
    conn.onCount?.((counter) => {
      if (!this.finished) this.recorder.increment(counter);
    });
    // A message the server refused with the connection left open (HTTP 503, a STOMP ERROR): counted by class now, lost at its timeout.
    conn.onError?.((errorClass, detail) => {
      if (this.finished) return;
      this.accounting.error(errorClass, detail);
      if (this.closed) {
        this.closed.failed(id, this.clock.monoUs());
        this.wake();
      }
    });
    if (down) return this.reopened(id, now, down);
    if (this.stages && id !== this.canaryId && !this.stages.opened(id, now)) return;
    if (this.live && id !== this.canaryId && !this.live.opened(id, now)) return;
    if (now >= this.endUs) {
      if (this.drained(now)) this.finish("completed");
      return;
    }
    if (id === this.canaryId) this.schedule.open(id, now, createArrival("constant", this.roles.canaryRate!));
    else if (this.closed) this.closed.open(id, now);
    else if (this.sweep) {
      // Sweep: connections only hold until stepping begins; each step schedules them itself.
    } else if (this.stages) {
      const until = Math.min(this.endUs, now + this.durationUs);
      if (this.schedule.open(id, now, undefined, until)) this.stages.scheduled(id, until, this.addExpected(now, until));
    } else if (this.plan.scenario.message.per === "connection") {
      // `duration` is each connection's sending time from its own open: an early connection does
      // not send longer than planned, and one slow to connect still sends its whole window.
      // One a live change added sends to the plan's end of sending at most: the run keeps its length.
      const until = id < this.count ? now + this.durationUs : Math.min(now + this.durationUs, this.t0 + this.timing.sendEndMs * 1000);
      if (until > this.endUs) this.endUs = this.schedule.endUs = until;
      this.windowEnd[id] = until;
      if (this.schedule.open(id, now, undefined, until)) this.addExpected(now, until);
    } else {
      // Aggregate: one window of `duration` from the first open; the shard still attempts every
      // connection, so it ends no earlier than its ramp.
      const until = now + this.durationUs;
      if (this.schedule.open(id, now, undefined, until)) {
        this.sendEndUs = until;
        this.endUs = this.schedule.endUs = Math.max(this.t0 + this.timing.rampMs * 1000, until);
        this.addExpected(now, until);
      }
    }
    // Next turn, not now: connections whose connects complete together are all in their rooms
    // before the first of them sends (its slot is still timed from the open, so any wait is send lag),
    // and a burst of opens costs one tick, not one each.
    this.wake();
  }

  /**
   * The next reconnect attempt of a connection the server closed, after the policy's wait (none
   * for immediate; backoff doubling to maxDelay, ± jitter); past maxAttempts or its window's end it
   * gives up, and what its window had left is counted unsent.
   */
  private retryReconnect(id: number): void {
    const d = this.down.get(id)!;
    const policy = this.reconnect!;
    const now = this.clock.monoUs();
    if (d.attempts >= policy.maxAttempts || now >= this.windowEnd[id]!) {
      this.down.delete(id);
      this.recorder.increment(COUNTERS.reconnectsFailed);
      this.recorder.increment(COUNTERS.unsent, d.remaining);
      if (this.drained(now)) this.finish("completed");
      return;
    }
    const base = policy.policy === "immediate" ? 0 : d.waitUs;
    const waitUs = base * (1 + policy.jitter * (2 * (this.opts.random ?? Math.random)() - 1));
    if (policy.policy === "backoff") d.waitUs = Math.min(d.waitUs * 2, durationMs(policy.maxDelay) * 1000);
    d.timer = setTimeout(() => {
      d.timer = undefined;
      if (this.finished || !this.down.has(id)) return;
      d.attempts++;
      if (this.clock.monoUs() >= this.windowEnd[id]!) return this.retryReconnect(id);
      this.attempt(id);
    }, waitUs / 1000);
  }

  /** A reconnect came back: its schedule goes on to its window's end; the slots of the gap are unsent. */
  private reopened(id: number, now: number, d: { droppedUs: number; remaining: number }): void {
    this.down.delete(id);
    this.recorder.increment(COUNTERS.reconnects);
    this.recorder.recordMicros(HISTOGRAMS.reconnectTime, now - d.droppedUs);
    const until = this.windowEnd[id]!;
    const left = until > now && this.schedule.open(id, now, undefined, until) ? this.slotsBetween(now, until) : 0;
    if (d.remaining > left) this.recorder.increment(COUNTERS.unsent, d.remaining - left);
    // The expected count had the whole window; the gap's slots are unsent, the rest are sent from here.
    this.totals.expected += Math.max(0, left - d.remaining);
    this.wake();
  }

  /** A live rate change heard: applied at its instant (at once if that has passed), the latest one winning. */
  private readonly onRate = (c: LiveRate): void => {
    if (this.finished || (c.what === "connections" ? connectionsControlRefusal(this.plan) : rateControlRefusal(this.plan))) return;
    const now = this.clock.monoUs();
    const change = { scale: c.scale, atUs: Math.max(now, now + (c.at - this.clock.hubNowMs()) * 1000) };
    if (c.what === "connections") this.connectionsChange = change;
    else this.rateChange = change;
    if (this.started) this.wake();
  };

  /** From the change's instant the shard holds the plan's count times `scale` connections (LivePopulation). */
  private applyConnections(c: { scale: number; atUs: number }): void {
    this.connectionsChange = undefined;
    this.live!.change(Math.max(0, Math.round(this.count * c.scale)), c.atUs, this.attempts);
  }

  /**
   * From the change's instant every schedule of the plan sends at its rate times `scale` (each keeps
   * its phase; see SendSchedule.rerate), and the expected count follows: sent + shed + unsent still
   * add up to what the schedules called for.
   */
  private applyRate(c: { scale: number; atUs: number }): void {
    this.rateChange = undefined;
    if (c.scale === this.rateScale) return;
    const msg = this.plan.scenario.message;
    const intervalUs = S / (msg.rate * c.scale);
    const counter = { constant: msg.arrival === "constant", between: (f: number, u: number, i: number) => this.slotsBetween(f, u, i) };
    this.totals.expected += this.schedule.rerate(
      createArrival(msg.arrival, msg.rate * c.scale, this.opts.random),
      this.intervalUs,
      intervalUs,
      c.atUs,
      this.isOpen,
      counter,
    );
    // Reconnecting connections: what their windows still hold from the change on is at the new rate.
    for (const [id, d] of this.down) {
      const old = d.remaining;
      const end = this.windowEnd[id]!;
      d.remaining = Math.max(0, old - this.slotsBetween(c.atUs, end)) + this.slotsBetween(c.atUs, end, intervalUs);
      this.totals.expected += d.remaining - old;
    }
    this.intervalUs = intervalUs;
    this.rateScale = c.scale;
  }

  /** Adds the slots of a schedule from `fromUs` to `untilUs` at `intervalUs` to expected; returns how many. */
  private addExpected(fromUs: number, untilUs: number, intervalUs = this.intervalUs): number {
    const slots = this.slotsBetween(fromUs, untilUs, intervalUs);
    this.totals.expected += slots;
    return slots;
  }

  /** How many slots a schedule from `fromUs` at `intervalUs` has before `untilUs` (Poisson: the expected number). */
  private slotsBetween(fromUs: number, untilUs: number, intervalUs = this.intervalUs): number {
    const span = untilUs - fromUs;
    if (span <= 0) return 0;
    let slots = span / intervalUs;
    if (this.plan.scenario.message.arrival === "constant") {
      // Count slot k exactly when the schedule sends it (fromUs + k·intervalUs < untilUs, the same
      // float arithmetic as the constant arrival): a plain ceil of the quotient counted one slot too
      // many whenever (now + duration) − now rounded a hair above the duration.
      slots = Math.ceil(slots);
      while (slots > 0 && fromUs + (slots - 1) * intervalUs >= untilUs) slots--;
      while (fromUs + slots * intervalUs < untilUs) slots++;
    }
    return slots;
  }

  private failed(err: unknown, id: number): void {
    this.inFlight--;
    if (this.finished) return;
    this.recorder.increment(COUNTERS.connectionsFailed);
    this.accounting.error(this.failures.record(err), connectErrorText(err));
    this.totals.failed++;
    if (this.down.has(id)) return this.retryReconnect(id);

    const allFailed = this.totals.failed === this.planned || this.totals.failed >= FAIL_FAST_ATTEMPTS;
    if (this.totals.opened === 0 && allFailed) {
      const attempts = this.attempts + (this.canaryAttempted ? 1 : 0);
      this.finish("errored", this.failures.reason(this.plan.target.url, this.totals.failed, attempts, this.planned));
    } else if (this.drained(this.clock.monoUs())) this.finish("completed");
    else if (this.sweep && !this.sweep.begun) this.wake(); // the last connect settled: stepping may begin
  }

  private readonly sendSlot = (id: number, intendedUs: number): void => {
    if (this.remaining !== Infinity && this.spent()) return;
    if (this.flow) this.flow.send(id, this.conns[id]!, intendedUs);
    else this.conns[id]!.send(this.accounting.message(id, intendedUs));
    this.frames.sent(this.clock.monoUs() - intendedUs);
    this.stages?.sent(id);
  };

  /** Hopelessly late: counted with its lag, and still one of its connection's slots (a stage's unsent count is what remains). */
  private readonly shedSlot = (id: number, intendedUs: number): void => {
    if (this.remaining !== Infinity && this.spent()) return;
    this.frames.shed(this.clock.monoUs() - intendedUs);
    this.totals.shed++;
    this.stages?.sent(id);
  };

  /** Closed loop: a user's next request, timed from when it was ready; nothing is expected of a closed loop ahead of its sends. */
  private readonly sendReady = (id: number, readyUs: number): void => {
    if (this.remaining <= 0) return;
    this.totals.expected++;
    this.sendSlot(id, readyUs);
  };

  /**
   * Exact count: takes one of the shard's remaining slots; true when none is left (the slot is
   * dropped unsent and uncounted). The last one ends the sending: the shard then only waits for
   * the replies still out, so it sends exactly its share of `requests`.
   */
  private spent(): boolean {
    if (this.remaining <= 0) return true;
    if (--this.remaining === 0) {
      this.endUs = this.schedule.endUs = this.clock.monoUs();
      if (this.closed) this.closed.endUs = this.endUs;
    }
    return false;
  }

  private onMessage(id: number, data: Buffer | string): void {
    if (this.finished) return;
    const now = this.clock.monoUs();
    this.accounting.received(id, data, now);
    if (this.closed) {
      this.closed.settled(id, now);
      this.wake(); // its next request may be due at once: one turn sends for every user freed meanwhile
    } else if (now >= this.nextTickUs && !this.wakeAt.relaxed(now)) this.wake(); // awake anyway: send what is due now, not on a second wake-up
    if (this.state[id] === State.Retiring) (this.stages ?? this.live)!.received(id);
    if (this.drained(now)) this.finish("completed");
  }

  private onEvent(id: number, event: string | undefined, data: unknown): void {
    if (this.finished) return;
    const now = this.clock.monoUs();
    this.accounting.receivedEvent(id, event, data, now);
    if (now >= this.nextTickUs && !this.wakeAt.relaxed(now)) this.wake();
    this.afterReply(id);
  }

  /** After a reply or delivery was counted: a retiring connection may close, the shard may be drained. */
  private readonly afterReply = (id: number): void => {
    if (this.finished) return;
    if (this.state[id] === State.Retiring) (this.stages ?? this.live)!.received(id);
    if (this.drained(this.clock.monoUs())) this.finish("completed");
  };

  private onClosed(id: number, info: CloseInfo): void {
    const was = this.state[id];
    if (this.finished || (was !== State.Open && was !== State.Retiring)) return;
    this.state[id] = State.Gone;
    this.conns[id] = undefined;
    if (was === State.Retiring) (this.stages ?? this.live)!.dropped(id);
    else this.active--;
    this.recorder.increment(COUNTERS.connectionsClosed);
    this.totals.closed++;
    if (info.byServer) {
      this.recorder.increment(COUNTERS.connectionsDropped);
      this.accounting.error(info.errorClass ?? "closed", closeText(info));
      // The slots its schedule still had will never go out: counted, never silently skipped.
      if (!this.stages && !this.sweep && !this.closed && id !== this.canaryId) {
        const now = this.clock.monoUs();
        const unsent = this.schedule.unsentOf(id, now, this.intervalUs, this.plan.scenario.message.arrival === "constant");
        if (this.reconnect && unsent > 0) {
          this.down.set(id, { droppedUs: now, remaining: unsent, attempts: 0, waitUs: durationMs(this.reconnect.delay) * 1000 });
          this.retryReconnect(id);
        } else if (unsent > 0) this.recorder.increment(COUNTERS.unsent, unsent);
      }
    }
    this.schedule.close(id);
    this.sweep?.close(id);
    this.accounting.closed(id);
  }

  /** Emits the current interval: a full second, or (given where it ends) the final partial one. */
  private emitFrame(partialEndUs?: number): void {
    this.frames.emit({ active: this.active, endUs: Math.min(this.endUs, this.sendEndUs), samples: this.accounting.samples }, partialEndUs);
  }

  private finish(status: ShardStatus, error?: string): void {
    if (this.finished) return;
    this.wakeAt.close();
    if (this.nextTurn) clearImmediate(this.nextTurn);
    this.finished = true;
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
    // Still down at the end: what their windows had left was never sent (on abort nobody waited).
    for (const d of this.down.values()) {
      if (d.timer) clearTimeout(d.timer);
      if (status !== "aborted") this.recorder.increment(COUNTERS.unsent, d.remaining);
    }
    this.down.clear();
    this.flow?.close();
    const now = this.clock.monoUs();
    while (now >= this.frames.nextUs) this.emitFrame();
    this.emitFrame(now);
    this.resolveRun(this.outcome(status, error));
  }

  private outcome(status: ShardStatus, error?: string): ShardOutcome {
    this.finished = true;
    this.frames.stop();
    // An exact count caps what was expected: the schedule's reckoning covers the whole duration.
    const expected = Math.round(Math.min(this.totals.expected, this.plan.scenario.kind === "http-rps" ? (this.plan.scenario.requests ?? Infinity) : Infinity));
    return {
      status,
      ...(error ? { error } : {}),
      ...(this.sweep?.stopped ? { sweepStopped: this.sweep.stopped } : {}),
      frames: this.frames.index,
      totals: { ...this.totals, expected },
    };
  }
}

/** Why a shard was aborted, in words: the signal's reason when it gave one. */
export function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (typeof r === "string") return r;
  if (r instanceof Error && r.name !== "AbortError") return r.message;
  return "aborted";
}
