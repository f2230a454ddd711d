import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { Worker } from "node:worker_threads";

/**
 * Waits longer than this sleep on an ordinary timer first: libuv's timers (and epoll's timeout) have
 * whole-millisecond resolution, so they wake up to ~1 ms early or late; what remains after the
 * coarse wait is left to the sleeper thread.
 */
const COARSE_US = 3_000;
/** The last few µs are spun on the engine thread, keeping I/O out no longer than this. */
const SPIN_US = 20;
/**
 * The sleeper is aimed this much later than its mean overshoot: most wake-ups then land a few µs
 * after the instant instead of spinning tens of µs before it, CPU a send would not get back.
 */
const LATE_BIAS_US = 15;
/** An early wake-up this close to the instant turns the event loop (I/O still read) until it. */
const TURN_US = 150;
/** The sleeper's wake-up overshoot assumed before any is measured (timer slack plus a thread wake-up). */
const INITIAL_EARLY_US = 50;
const MAX_EARLY_US = 400;
/**
 * The sleeper wakes the engine at most once per this long (µs). At high send rates one wake-up sends
 * every slot due in the gap (a slot waits at most this long, timed from its intended instant, as
 * always), and any reply read meanwhile sends what is due even sooner: each wake-up costs both
 * threads a context switch (25-35 µs of CPU for a timed wait on a VM), which per send would cost more
 * than the send.
 */
const PACE_US = 60;
/** How long before its deadline's aim the sleeper may already be past it (the two clocks read µs apart). */
const POSTED_MARGIN_US = 20;
/** The event loop's busy share at which the engine stops waking precisely, and below which it starts again (see relaxed()). */
const RELAX_AT = 0.35;
const PRECISE_BELOW = 0.2;
/** How often the event loop's utilisation is read for the pace. */
const UTILISATION_EVERY_US = 100_000;

/** control[] slots shared with the sleeper. */
const ARMED = 0;
const PARKED = 1;

/**
 * The sleeper thread, as source: it runs from any build (tsx, the esbuild bundle, the packed agent).
 * control[ARMED] counts deadlines written; deadline[0] is the latest (hrtime ms; NaN none, < 0 exit),
 * deadline[1] where the engine expects the one after it (NaN: no prediction). It sleeps until the
 * deadline, re-reading it at every wake-up (so the engine moves it later for free), and posts the
 * deadline's number once it is due. Then it sleeps until the prediction, where the engine's next
 * deadline usually is by then, written without a signal; it parks (until signalled) once nothing
 * new was written by the prediction, or without one.
 */
const SLEEPER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const control = new Int32Array(workerData, 0, 2);
const deadline = new Float64Array(workerData, 8, 2);
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
let posted = -1;
for (;;) {
  const armed = Atomics.load(control, ${ARMED});
  const at = deadline[0];
  if (at < 0) break;
  const now = nowMs();
  if (at !== at || armed === posted) {
    const then = deadline[1];
    if (armed === posted && then > now) { Atomics.wait(control, ${ARMED}, armed, then - now); continue; }
    Atomics.store(control, ${PARKED}, 1);
    Atomics.wait(control, ${ARMED}, armed);
    Atomics.store(control, ${PARKED}, 0);
    continue;
  }
  if (at > now) { Atomics.wait(control, ${ARMED}, armed, at - now); continue; }
  posted = armed;
  parentPort.postMessage(armed);
}
`;

/** A sleeper thread and the memory it shares with its engine. */
interface Sleeper {
  worker: Worker;
  control: Int32Array;
  deadline: Float64Array;
  /** Resolves once the thread runs (its start-up done), or failed. */
  online: Promise<void>;
  dead: boolean;
}

/** Parked sleepers a closed PreciseWake handed back or prestartSleeper started, for the next engine on this thread. */
const idle: Sleeper[] = [];
/** Idle sleepers kept per thread (each is a Node worker: a few MB and no CPU while parked). */
const MAX_IDLE = 1;

function startSleeper(): Sleeper {
  const shared = new SharedArrayBuffer(24);
  const worker = new Worker(SLEEPER_SOURCE, { eval: true, workerData: shared, stdout: false, stderr: false });
  const sleeper: Sleeper = { worker, control: new Int32Array(shared, 0, 2), deadline: new Float64Array(shared, 8, 2), online: Promise.resolve(), dead: false };
  sleeper.deadline.fill(Number.NaN);
  sleeper.online = new Promise<void>((resolve) => {
    worker.once("online", resolve);
    // A sleeper that fails (a worker thread refused by a resource limit) is never handed out again.
    const gone = () => {
      sleeper.dead = true;
      const at = idle.indexOf(sleeper);
      if (at >= 0) idle.splice(at, 1);
      resolve();
    };
    worker.once("error", gone);
    worker.once("exit", gone);
  });
  worker.unref();
  return sleeper;
}

/**
 * Starts a sleeper thread now, parked, for the next engine on this thread to take: a thread's own
 * start-up (tens of ms of CPU) then happens while a shard arms, not at its start instant on the core
 * the first sends need. Resolves once it runs.
 */
export function prestartSleeper(): Promise<void> {
  const ready = idle.find((s) => !s.dead);
  if (ready) return ready.online;
  const s = startSleeper();
  idle.push(s);
  return s.online;
}

/**
 * Wakes the engine at a monotonic instant to within tens of µs, where a Node timer wakes it up to a
 * millisecond off. A send scheduled for t must leave at t: its latency is timed from t either way,
 * but every µs of send lag is the tool's own error added to what it reports.
 *
 * The precise part of a wait runs on a small sleeper thread blocked in Atomics.wait, whose timeout
 * is a fraction of a millisecond; when it expires the thread posts a message, which wakes the
 * engine's event loop at once (an async handle, not a timer). The engine thread never blocks, so
 * replies that arrive meanwhile are read and timed when they arrive. The sleeper is aimed early by
 * its own measured overshoot and the last few µs are spun, so the wake lands on the instant. The
 * engine signals the sleeper only when it must (a deadline earlier than the sleeper will look again,
 * or a parked sleeper): thread wake-ups are what precision costs. Each request may carry the engine's
 * prediction of the one after it (the next send after the next): the sleeper, once it has posted,
 * looks again at that instant's aim, so a next request that lands where predicted needs no signal
 * (a signal wakes the parked sleeper, which on a shared core also preempts the engine: both threads
 * pay a context switch, twice per send without it).
 */
export class PreciseWake {
  private sleeper: Sleeper | undefined;
  /** The number of the deadline last written (what the sleeper posts back when it is due). */
  private armed = 0;
  /** The latest the sleeper looks at its deadline again, on the monotonic clock (Infinity: unknown, signal it). */
  private sleeperLooksUs = Infinity;
  /** Where the last sleeper wake-up was aimed, and when the engine got it. */
  private aimedUs = 0;
  private lastWokenUs = -Infinity;
  private targetUs = Number.NaN;
  /** The current request's prediction of the one after it. */
  private thenUs = Number.NaN;
  /** The prediction the sleeper holds with its deadline, and the aim it looks again at once it has posted. */
  private predictedUs = Number.NaN;
  private thenAimUs = Number.NaN;
  private earlyUs = INITIAL_EARLY_US;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  /** A wake-up is pending: the sleeper keeps the process alive, as a timer would. */
  private waiting = false;
  /** The sleeper woke the engine a little early: turn the event loop until the instant. */
  private turning = false;
  private closed = false;
  private paceUs = PACE_US;
  private relaxedNow = false;
  private utilisation: EventLoopUtilization = performance.eventLoopUtilization();
  private utilisationAtUs = 0;
  private signalled = 0;

  constructor(
    private readonly monoUs: () => number,
    private readonly fire: () => void,
  ) {}

  /**
   * Takes a parked sleeper thread (prestartSleeper, or one a closed waker handed back), else starts
   * one, ahead of the first wait that needs it (a thread takes tens of ms to start). Resolves once it runs.
   */
  prepare(): Promise<void> {
    if (this.sleeper || this.closed) return this.sleeper?.online ?? Promise.resolve();
    let sleeper = idle.shift();
    while (sleeper?.dead) sleeper = idle.shift();
    sleeper ??= startSleeper();
    sleeper.worker.on("message", this.onSleeperMessage);
    sleeper.worker.on("error", this.onSleeperError);
    // Whatever it posted for an earlier owner carries a number below this one and is ignored.
    this.armed = Atomics.load(sleeper.control, ARMED);
    this.sleeper = sleeper;
    return sleeper.online;
  }

  /** How often the sleeper was signalled (each signal wakes it): what predictions save, for tests. */
  get signals(): number {
    return this.signalled;
  }

  /**
   * Calls fire once, at `atUs` on the monotonic clock or as soon after as the thread can; replaces any
   * earlier request. `thenUs` predicts the request that will follow this one (NaN: none): a wrong
   * prediction costs the sleeper one wake-up (too early) or the signal it would need anyway (too late).
   */
  at(atUs: number, thenUs = Number.NaN): void {
    if (this.closed) return;
    this.cancel();
    this.targetUs = atUs;
    this.arm(thenUs);
  }

  /** Drops the pending request. The sleeper is not told: a deadline it still holds passes unposted or fires into nothing. */
  cancel(): void {
    this.targetUs = Number.NaN;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = this.immediate = undefined;
    this.turning = false;
    if (this.waiting) {
      this.waiting = false;
      this.sleeper?.worker.unref();
    }
  }

  /** Parks the sleeper and hands it back for the next engine on this thread (or ends it, when one is already kept). */
  close(): void {
    if (this.closed) return;
    this.cancel();
    this.closed = true;
    const s = this.sleeper;
    this.sleeper = undefined;
    if (!s) return;
    s.worker.off("message", this.onSleeperMessage);
    s.worker.off("error", this.onSleeperError);
    const keep = !s.dead && idle.length < MAX_IDLE;
    s.deadline[1] = Number.NaN;
    s.deadline[0] = keep ? Number.NaN : -1;
    Atomics.add(s.control, ARMED, 1);
    Atomics.notify(s.control, ARMED);
    if (keep) idle.push(s);
    else void s.worker.terminate();
  }

  /** A sleeper that failed leaves the ordinary timer. */
  private readonly onSleeperError = (): void => {
    this.sleeper = undefined;
    if (!Number.isNaN(this.targetUs)) this.arm();
  };

  private arm = (thenUs?: number): void => {
    this.timer = this.immediate = undefined;
    // A timer's or immediate's re-arm keeps the request's prediction (timers pass no number).
    if (typeof thenUs === "number") this.thenUs = thenUs;
    const target = this.targetUs;
    if (Number.isNaN(target)) return;
    const now = this.monoUs();
    const remaining = target - now;
    if (remaining <= 0) return this.due();
    if (remaining <= SPIN_US) {
      while (this.monoUs() < target);
      return this.due();
    }
    const coarseOnly = !this.sleeper || this.relaxed(now);
    // The instant the sleeper will look at anyway, as the last request predicted: no coarse timer, no signal.
    const predicted = target === this.predictedUs && this.sleeperLooks(now) === this.thenAimUs;
    if ((remaining > COARSE_US && !predicted) || coarseOnly) {
      // Whole ms early, so the coarse timer never overshoots; without the sleeper it is all there is.
      const ms = coarseOnly ? Math.ceil(remaining / 1000) : Math.floor(remaining / 1000) - 2;
      this.timer = setTimeout(this.arm, Math.max(0, ms));
      return;
    }
    if (this.turning) {
      this.immediate = setImmediate(this.arm);
      return;
    }
    if (predicted) return this.setSleeper(Math.max(this.thenAimUs, now), now);
    // Never sooner than one pace after the last wake-up: what comes due meanwhile waits for it.
    this.setSleeper(Math.max(target - this.earlyUs + LATE_BIAS_US, this.lastWokenUs + this.paceUs, now), now);
  };

  /**
   * Whether precision is off for now: the engine's thread is busy, and waits on timers alone, sending
   * what is due on its own wake-ups rather than after every event, as a timer loop does. Precision
   * costs wake-ups (both threads' context switches, and a tick per wake-up instead of one per
   * millisecond): at 20,000 msg/s on one core it would cost ~40 % more CPU per message, CPU an agent
   * near its limit needs for sends and replies. Every slot is still timed from its intended instant,
   * so what relaxing costs shows as send lag. Off from RELAX_AT busy, on again below PRECISE_BELOW
   * (no flapping at the edge); below that, the least time between wake-ups grows with the load.
   */
  relaxed(nowUs: number): boolean {
    // The first window opens at construction, so a shard whose set-up kept the thread busy starts
    // relaxed: judged from its first wait instead, 10,000 msg/s on one core spent its first 100 ms
    // waking precisely and fell 55 ms behind (bench/send-lag.ts start, Session 24).
    if (nowUs - this.utilisationAtUs >= UTILISATION_EVERY_US) {
      const current = performance.eventLoopUtilization();
      const busy = performance.eventLoopUtilization(current, this.utilisation).utilization;
      this.utilisation = current;
      this.utilisationAtUs = nowUs;
      if (busy >= RELAX_AT) this.relaxedNow = true;
      else if (busy < PRECISE_BELOW) this.relaxedNow = false;
      this.paceUs = PACE_US * (1 + (busy / PRECISE_BELOW) ** 3);
    }
    return this.relaxedNow;
  }

  private setSleeper(aimUs: number, nowUs: number): void {
    const { worker, control, deadline } = this.sleeper!;
    if (!this.waiting) {
      this.waiting = true;
      worker.ref();
    }
    const looks = this.sleeperLooks(nowUs);
    this.aimedUs = aimUs;
    const hrNow = hrNowMs();
    deadline[0] = hrNow + (aimUs - nowUs) / 1000;
    // Aimed as the engine would aim it now (its overshoot, at least a pace after this wake-up).
    const then = this.thenUs > this.targetUs && this.thenUs < Infinity ? this.thenUs : Number.NaN;
    this.predictedUs = then;
    this.thenAimUs = Number.isNaN(then) ? Number.NaN : Math.max(then - this.earlyUs + LATE_BIAS_US, aimUs + this.paceUs);
    deadline[1] = Number.isNaN(then) ? Number.NaN : hrNow + (this.thenAimUs - nowUs) / 1000;
    this.armed = Atomics.add(control, ARMED, 1) + 1;
    // The sleeper looks again by `looks`: a later deadline it finds then, unsignalled.
    const signal = aimUs < looks || Atomics.load(control, PARKED) === 1;
    this.sleeperLooksUs = Math.max(looks, aimUs);
    if (signal) {
      this.signalled++;
      this.sleeperLooksUs = aimUs;
      Atomics.notify(control, ARMED);
    }
  }

  /**
   * The latest the sleeper looks at its deadline again. Once the last deadline has passed it may
   * have posted and gone on to sleep until that deadline's prediction, which the engine learns only
   * when it reads the post: until then a request before the prediction must signal it, or it waits
   * there (at a shard's start, with the next frame as the prediction, a second).
   */
  private sleeperLooks(nowUs: number): number {
    const mayHavePosted = nowUs >= this.aimedUs - POSTED_MARGIN_US;
    return mayHavePosted && this.thenAimUs > this.sleeperLooksUs ? this.thenAimUs : this.sleeperLooksUs;
  }

  private readonly onSleeperMessage = (armed: number): void => {
    if (armed !== this.armed) return;
    const now = this.monoUs();
    this.lastWokenUs = now;
    // It looks again at the prediction's aim, or parks until signalled (a prediction already past).
    this.sleeperLooksUs = this.thenAimUs > now ? this.thenAimUs : Infinity;
    // Aim the sleeper early by its usual overshoot, a moving average, so one preempted wake-up
    // does not move the aim far.
    this.earlyUs = Math.min(MAX_EARLY_US, Math.max(0, this.earlyUs + 0.1 * (now - this.aimedUs - this.earlyUs)));
    if (Number.isNaN(this.targetUs)) return this.cancel();
    const remaining = this.targetUs - now;
    this.turning = remaining > SPIN_US && remaining <= TURN_US;
    this.arm();
  };

  private due(): void {
    this.cancel();
    this.fire();
  }
}

const hrNowMs = (): number => Number(process.hrtime.bigint()) / 1e6;
