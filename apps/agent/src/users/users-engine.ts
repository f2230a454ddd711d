import { COUNTERS, durationMs, flowRows, HISTOGRAMS, planTiming, userConnections, type Plan, type TemplateContext } from "@volley/contracts";
import { publicOnlyLookup } from "@volley/contracts/public-lookup";
import { IntervalRecorder } from "@volley/metrics";
import { connectOptionsFor } from "../drivers/connect-options";
import type { Driver } from "../drivers/driver";
import { driverFor } from "../drivers/driver-for";
import { systemClock, type Clock } from "../engine/clock";
import { ConnectFailures } from "../engine/connect-failures";
import { closeText, connectErrorText } from "../engine/error-text";
import { MinHeap } from "../engine/min-heap";
import { PreciseWake } from "../engine/precise-wake";
import type { LiveRate } from "../engine/rate-feed";
import { scenarioRoles } from "../engine/scenario-roles";
import { ShardAccounting } from "../engine/shard-accounting";
import { abortReason } from "../engine/shard-engine";
import { ShardFrames } from "../engine/shard-frames";
import { SoonestTwo } from "../engine/soonest-two";
import { SweepStepper } from "../engine/sweep-stepper";
import { sourceAddressFor } from "../engine/source-addresses";
import { refusedTarget } from "../engine/target-guard";
import type { RunShardOptions, ShardOutcome, ShardStatus, ShardTotals } from "../engine/types";
import { compileFlow } from "../flow/flow-program";
import { FlowDispatcher } from "../flow/http-step";
import { ShardHooks } from "./shard-hooks";
import { UserArrivals } from "./user-arrivals";
import { connectionMetrics, type ConnectionMetrics } from "./connection-metrics";
import { compileUserSteps, ConnectFailed, StepFailure, Stopped, type UserHost, type UserLink, type UserRun } from "./user-steps";

/** With no connection opened after this many failed connects, the shard errors instead of grinding on. */
const FAIL_FAST_CONNECTS = 100;
const S = 1_000_000;

/**
 * A users shard (scenario kind `users`): users arrive open-loop at the shard's arrivalRate from the
 * start instant for `duration`, each into a free slot (connections.count of them; none free: the
 * arrival is counted in users.dropped), runs flow.steps and leaves. One wake-up loop (the precise
 * sleeper) serves arrivals, frame boundaries and every user's next step instant; users' steps run as
 * promise chains between its turns. The shard ends when arrivals are over and the last user has
 * left, or at the plan's end bound (arrivals + maxUserTime), where users still busy count failed.
 * With a sweep, the arrival rate steps (SweepStepper, as a connection scenario's message rate
 * does): each slot's users arrive open-loop at its step's rate over its warm-up and hold, none in
 * the gaps, and each hold is judged on its users (steps' times, users failed, step failures).
 */
export class UsersEngine {
  private readonly clock: Clock;
  private readonly driver: Driver | undefined;
  private readonly recorder = new IntervalRecorder();
  private readonly frames: ShardFrames;
  private readonly accounting: ShardAccounting;
  private readonly totals: ShardTotals = { expected: 0, sent: 0, received: 0, lost: 0, shed: 0, duplicated: 0, opened: 0, failed: 0, closed: 0 };
  private readonly wake: PreciseWake;
  private arrival: UserArrivals;
  /** Where `arrival`'s offsets count from, µs monotonic: the start instant, or a sweep slot's start. */
  private arrivalBaseUs = 0;
  private readonly sweep: SweepStepper | undefined;
  private readonly failures = new ConnectFailures();
  private readonly random: () => number;
  private readonly lookup: { lookup?: ReturnType<typeof publicOnlyLookup> };
  private readonly rows: Record<string, unknown>[];
  private readonly indexBase: number;
  private readonly maxUserUs: number;
  private steps: ((u: UserRun) => Promise<void>) | undefined;
  /** A user holding several connections: each one's own counts and connect times, by its name. */
  private readonly perLink: ConnectionMetrics | undefined;
  private readonly listen: string[];
  private readonly dispatcher: FlowDispatcher;
  /** Pending step instants: timer id → its resolve, ordered by due time. */
  private readonly timers = new MinHeap();
  private readonly soonest = new SoonestTwo();
  private readonly resolvers = new Map<number, () => void>();
  private nextTimer = 0;
  private readonly free: number[];
  private readonly users = new Set<UserRun>();
  private readonly arrivedAt = new Map<UserRun, number>();
  private t0 = 0;
  private endUs = 0;
  private hardEndUs = 0;
  private arrivals = 0;
  private rateScale = 1;
  private nextArrivalUs = 0;
  private armedUs = Infinity;
  private readonly hooks: ShardHooks;
  private afterRunning = false;
  private started = false;
  private finished = false;
  private resolveRun: (o: ShardOutcome) => void = () => {};

  constructor(
    private readonly plan: Plan,
    private readonly opts: RunShardOptions,
  ) {
    if (plan.scenario.kind !== "users") throw new Error("UsersEngine runs scenario kind users");
    const scenario = plan.scenario;
    this.clock = opts.clock ?? systemClock();
    this.driver = opts.driver;
    this.random = opts.random ?? Math.random;
    this.lookup = opts.publicOnly ? { lookup: publicOnlyLookup() } : {};
    this.wake = new PreciseWake(
      () => this.clock.monoUs(),
      () => this.tick(),
    );
    this.arrival = new UserArrivals(scenario, this.random);
    this.maxUserUs = durationMs(scenario.maxUserTime) * 1000;
    if (plan.sweep) this.sweep = new SweepStepper(plan, this.stepperHost, this.random);
    this.frames = new ShardFrames(this.recorder, opts, durationMs(scenario.warmup), this.sweep, undefined);
    this.accounting = new ShardAccounting(this.recorder, this.totals, scenarioRoles(scenario, "users"), -1, 64, durationMs(scenario.message.timeout) * 1000);
    this.rows = flowRows(plan.flow?.data);
    this.indexBase = plan.flow?.indexBase ?? 0;
    this.free = Array.from({ length: plan.connections.count }, (_, i) => plan.connections.count - 1 - i);
    this.dispatcher = new FlowDispatcher(this.lookup.lookup, durationMs(plan.target.connectTimeout));
    this.listen = compileFlow(plan)?.listen ?? [];
    this.hooks = new ShardHooks(plan, this.dispatcher, this.recorder, () => this.clock.monoUs());
    const links = userConnections(plan);
    this.perLink = links.size > 1 ? connectionMetrics(this.recorder) : undefined;
  }

  /**
   * Compiles the steps once every connection's driver is in: the target's (the agent's), and those
   * of connections with a protocol of their own, loaded on first use. Undefined: the target's is missing.
   */
  private async compile(): Promise<string | undefined> {
    if (!this.driver) return `protocol "${this.plan.target.protocol}" is not supported by this agent`;
    const drivers = new Map<string, Driver>([[this.plan.target.protocol, this.driver]]);
    for (const { protocol } of userConnections(this.plan).values()) {
      if (drivers.has(protocol)) continue;
      try {
        const d = await driverFor(protocol);
        if (!d) return `protocol "${protocol}" (a user's connection) is not supported by this agent`;
        drivers.set(protocol, d);
      } catch (err) {
        return `the ${protocol} driver could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    this.steps = compileUserSteps(this.plan, this.host, (p) => drivers.get(p)!, this.dispatcher, this.listen);
    return undefined;
  }

  async run(): Promise<ShardOutcome> {
    const { signal } = this.opts;
    const missing = await this.compile();
    if (missing) return this.outcome("errored", missing);
    if (signal?.aborted) return this.outcome("aborted", abortReason(signal));
    const refused = this.opts.publicOnly ? await refusedTarget(this.plan.target.url) : null;
    if (refused) return this.outcome("errored", refused);
    // Before the start instant where the lead allows: users arrive on the plan's line from it regardless.
    try {
      await this.hooks.run("before");
    } catch (err) {
      void this.dispatcher.close().catch(() => {});
      return this.outcome("errored", (err as Error).message);
    }
    if (signal?.aborted) return this.outcome("aborted", abortReason(signal));
    const timing = planTiming(this.plan);
    this.t0 = this.clock.monoUs() + (this.opts.startAt - this.clock.hubNowMs()) * 1000;
    this.endUs = this.t0 + timing.sendEndMs * 1000;
    this.hardEndUs = this.t0 + timing.endByMs * 1000;
    this.arrivalBaseUs = this.t0;
    this.frames.begin(this.t0);
    if (this.sweep) {
      // Nothing to open first: stepping begins at the start instant, with the first slot's arrivals.
      this.nextArrivalUs = Infinity;
      this.sweep.begin(this.t0, this.t0);
      this.sweep.startDue(0);
    } else this.nextArrivalUs = this.t0 + this.arrival.next();
    this.wake.prepare();
    const done = new Promise<ShardOutcome>((resolve) => (this.resolveRun = resolve));
    const onAbort = () => this.finish("aborted", abortReason(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });
    this.opts.rate?.listen(this.onRate);
    this.arm(this.t0);
    const outcome = await done;
    signal?.removeEventListener("abort", onAbort);
    return outcome;
  }

  private readonly host: UserHost = {
    monoUs: () => this.clock.monoUs(),
    sleepUntil: (atUs) => {
      if (this.finished) return Promise.reject(new Stopped());
      if (atUs <= this.clock.monoUs()) return Promise.resolve();
      return new Promise((resolve) => {
        const id = this.nextTimer++;
        this.resolvers.set(id, resolve);
        this.timers.push(id, atUs);
        if (atUs < this.armedUs) this.arm(atUs);
      });
    },
    recorder: this.recorder,
    sent: (lagUs) => {
      this.frames.sent(lagUs);
      this.recorder.increment(COUNTERS.sent);
      this.totals.sent++;
      this.totals.expected++;
    },
    replied: (ok) => {
      if (this.finished) return;
      this.recorder.increment(ok ? COUNTERS.received : COUNTERS.lost);
      if (ok) this.totals.received++;
      else this.totals.lost++;
    },
    connected: (u, link, connectUs) => {
      const conn = link.s.conn!;
      if (this.finished) return conn.close();
      this.recorder.recordMicros(HISTOGRAMS.connect, connectUs);
      this.recorder.increment(COUNTERS.connectionsOpened);
      this.perLink?.opened(link.name, connectUs);
      this.totals.opened++;
      // Protocol counts (MQTT: acknowledged publishes, retained copies), as connection scenarios count them.
      conn.onCount?.((counter) => {
        if (!this.finished) this.recorder.increment(counter);
      });
      conn.onClose((info) => {
        if (link.s.conn !== conn || this.finished) return;
        link.s.conn = undefined;
        this.closedOne();
        if (!info.byServer) return;
        this.recorder.increment(COUNTERS.connectionsDropped);
        this.perLink?.dropped(link.name);
        const why = closeText(info);
        this.accounting.error(info.errorClass ?? "closed", why);
        if (!u.left) link.onDrop?.(why);
      });
    },
    connectFailed: (err, retry) => {
      if (this.finished) return;
      this.recorder.increment(COUNTERS.connectionsFailed);
      this.accounting.error(this.failures.record(err), connectErrorText(err));
      this.totals.failed++;
      if (!retry && this.totals.opened === 0 && this.totals.failed >= FAIL_FAST_CONNECTS) this.failFast();
    },
    reconnected: (link, afterUs) => {
      if (afterUs === undefined) this.recorder.increment(COUNTERS.reconnectsFailed);
      else {
        this.recorder.increment(COUNTERS.reconnects);
        this.recorder.recordMicros(HISTOGRAMS.reconnectTime, afterUs);
      }
      this.perLink?.reconnected(link.name, afterUs);
    },
    unsent: () => this.recorder.increment(COUNTERS.unsent),
    disconnected: (_u, link) => this.close(link),
    random: () => this.random(),
  };

  /** What the sweep needs of the shard: users have no send schedule, so each slot starts arrivals. */
  private readonly stepperHost = {
    openIds: () => [],
    addExpected: () => {},
    setEnd: (endUs: number) => {
      this.endUs = endUs;
      this.hardEndUs = endUs + this.maxUserUs;
    },
    // Users busy in a step at the end of a hold: that step's time so far (a lower bound of it).
    awaitedAges: () => {
      const now = this.clock.monoUs();
      return [...this.users].map((u) => now - u.at).filter((age) => age > 0);
    },
    startArrivals: (rate: number, fromUs: number, untilUs: number) => {
      if (this.finished) return;
      const scenario = this.plan.scenario as Extract<Plan["scenario"], { kind: "users" }>;
      this.arrival = new UserArrivals({ ...scenario, arrivalRate: rate, stages: undefined, duration: (untilUs - fromUs) / 1000 }, this.random);
      this.arrivalBaseUs = fromUs;
      this.nextArrivalUs = fromUs + this.arrival.next();
      if (this.nextArrivalUs < this.armedUs) this.arm(Math.max(this.clock.monoUs(), this.nextArrivalUs));
    },
  };

  /** A live rate change: arrivals from its instant on follow the plan's rate line times its scale. */
  private readonly onRate = (c: LiveRate): void => {
    // A sweep sets its own rate at every step (rate-control refuses changes to one).
    if (this.finished || this.sweep || c.what !== "rate" || c.scale === this.rateScale) return;
    this.rateScale = c.scale;
    const now = this.clock.monoUs();
    const atUs = Math.max(now, now + (c.at - this.clock.hubNowMs()) * 1000);
    this.arrival.rescale(atUs - this.t0, c.scale);
    this.nextArrivalUs = this.arrivalBaseUs + this.arrival.pending();
    if (this.nextArrivalUs < this.armedUs) this.arm(Math.max(now, this.nextArrivalUs));
  };

  /** `thenUs` predicts the wake-up after this one, for the waker (see PreciseWake.at). */
  private arm(atUs: number, thenUs = Number.NaN): void {
    this.armedUs = atUs;
    this.wake.at(atUs, thenUs);
  }

  private tick(): void {
    this.armedUs = Infinity;
    if (this.finished) return;
    let now = this.clock.monoUs();
    if (!this.started) {
      this.started = true;
      this.frames.started();
      this.opts.onStart?.(this.clock.hubNowMs());
    }
    // A late turn: arrivals meant before a boundary count in the interval they were meant for (a sweep's hold is judged on them).
    while (now >= this.frames.nextUs) {
      this.arriveBefore(this.frames.nextUs);
      this.emitFrame();
    }
    this.arriveBefore(now + 0.001);
    now = this.clock.monoUs();
    while (this.timers.peekKey() <= now) {
      const id = this.timers.pop()!;
      this.resolvers.get(id)?.();
      this.resolvers.delete(id);
    }
    if (now >= this.hardEndUs) return this.finish("completed");
    if (now >= this.endUs && this.users.size === 0) return this.finishAfter(this.connectStatus());
    const soonest = this.soonest.reset().add(this.frames.nextUs).add(this.timers.peekKey()).add(this.timers.peekSecondKey()).add(this.hardEndUs);
    if (this.nextArrivalUs < this.endUs) soonest.add(this.nextArrivalUs);
    else if (now < this.endUs) soonest.add(this.endUs);
    // Due already (a step instant passed while this turn ran): the next turn, after I/O, never a nested call.
    if (soonest.first <= this.clock.monoUs()) return void setImmediate(() => this.tick());
    this.arm(soonest.first, soonest.second);
  }

  /** Starts every arrival meant before `limitUs` (µs monotonic). */
  private arriveBefore(limitUs: number): void {
    while (this.nextArrivalUs < limitUs && this.nextArrivalUs < this.endUs) {
      this.arrive(this.nextArrivalUs);
      this.arrivals++;
      this.nextArrivalUs = this.arrivalBaseUs + this.arrival.next();
    }
  }

  private arrive(intendedUs: number): void {
    const slot = this.free.pop();
    if (slot === undefined) {
      this.recorder.increment(COUNTERS.usersDropped);
      return;
    }
    this.recorder.increment(COUNTERS.usersStarted);
    const index = this.indexBase + slot;
    const ctx: TemplateContext = {
      connIndex: index,
      connRoom: undefined,
      msgId: "",
      msgSeq: 0,
      data: this.rows.length === 0 ? undefined : this.rows[index % this.rows.length],
      vars: { ...this.hooks.vars },
    };
    const base = connectOptionsFor(this.plan.target, { ...sourceAddressFor(this.opts.sourceAddresses, slot), ...this.lookup }, true);
    const u: UserRun = {
      s: { id: slot, ctx, jar: new Map(), conn: undefined, connectUs: 0, inbox: [], waiter: undefined, base },
      links: new Map(),
      at: intendedUs,
      deadline: intendedUs + this.maxUserUs,
      serial: this.arrivals,
      sends: 0,
    };
    this.users.add(u);
    this.arrivedAt.set(u, intendedUs);
    this.steps!(u).then(
      () => this.leave(u, undefined),
      (err: unknown) => this.leave(u, err),
    );
  }

  /** A user left: counted completed or failed (the failed step by name, with why), its slot freed. */
  private leave(u: UserRun, err: unknown): void {
    if (this.finished || !this.users.delete(u)) return;
    u.left = true;
    this.closeAll(u);
    const now = this.clock.monoUs();
    if (err === undefined) this.recorder.increment(COUNTERS.usersCompleted);
    else {
      this.recorder.increment(COUNTERS.usersFailed);
      if (err instanceof StepFailure) this.accounting.error(`step.${err.step}`, err.message);
      else if (!(err instanceof ConnectFailed)) this.accounting.error("other", String((err as Error)?.message ?? err));
    }
    this.recorder.recordMicros(HISTOGRAMS.userTime, now - this.arrivedAt.get(u)!);
    this.arrivedAt.delete(u);
    this.free.push(u.s.id);
    if (now >= this.endUs && this.users.size === 0) setImmediate(() => this.tick());
  }

  private close(link: UserLink): void {
    const conn = link.s.conn!;
    link.s.conn = undefined;
    conn.close();
    this.closedOne();
  }

  private closeAll(u: UserRun): void {
    for (const link of u.links.values()) if (link.s.conn) this.close(link);
  }

  private closedOne(): void {
    this.recorder.increment(COUNTERS.connectionsClosed);
    this.totals.closed++;
  }

  /** No connection ever opened: the run errors naming why, as a connection scenario does. */
  private connectStatus(): ShardStatus {
    return this.totals.opened === 0 && this.totals.failed > 0 ? "errored" : "completed";
  }

  private failFast(): void {
    this.finish("errored", this.failures.reason(this.plan.target.url, this.totals.failed, this.totals.failed, this.totals.failed));
  }

  private emitFrame(partialEndUs?: number): void {
    this.frames.emit({ active: this.users.size, endUs: Infinity, samples: this.accounting.samples }, partialEndUs);
    // A sweep's slots start on interval boundaries: the next one may start with the interval just begun.
    if (partialEndUs === undefined) this.sweep?.startDue(this.frames.index * S);
  }

  /** The users are done: flow.after (once), then the end; a failed after request errors the shard naming it. */
  private finishAfter(status: ShardStatus): void {
    if (!this.plan.flow?.after) return this.finish(status);
    if (this.afterRunning) return;
    this.afterRunning = true;
    this.hooks.run("after").then(
      () => this.finish(status),
      (err: unknown) => this.finish("errored", (err as Error).message),
    );
  }

  private finish(status: ShardStatus, error?: string): void {
    if (this.finished) return;
    // Users still busy at the plan's end bound ran past maxUserTime; on abort nobody waited for them.
    for (const u of [...this.users]) {
      u.left = true;
      if (status !== "aborted")
        this.leave(u, new StepFailure("maxUserTime", `still busy when the run reached its end (${this.plan.scenario.duration} of arrivals + maxUserTime)`));
      else this.closeAll(u);
    }
    if (status === "errored" && !error) error = this.failures.reason(this.plan.target.url, this.totals.failed, this.totals.failed, this.totals.failed);
    this.finished = true;
    this.wake.close();
    this.resolvers.clear();
    this.timers.clear();
    void this.dispatcher.close().catch(() => {});
    if (!this.started) return this.resolveRun(this.outcome(status, error));
    const now = this.clock.monoUs();
    while (now >= this.frames.nextUs) this.emitFrame();
    this.emitFrame(now);
    this.resolveRun(this.outcome(status, error));
  }

  private outcome(status: ShardStatus, error?: string): ShardOutcome {
    this.finished = true;
    this.frames.stop();
    return {
      status,
      ...(error ? { error } : {}),
      frames: this.frames.index,
      totals: { ...this.totals },
      ...(this.sweep?.stopped ? { sweepStopped: this.sweep.stopped } : {}),
    };
  }
}
