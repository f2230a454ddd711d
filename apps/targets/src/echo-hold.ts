import { HoldStats } from "./hold-stats";

/**
 * The exact-hold reply discipline shared by every echo target (ws, Socket.IO, SockJS): replies
 * leave each connection in arrival order, each no sooner than the connection's delay after its
 * message arrived, and a server-wide stall() holds them all. The hold time is the ground truth of
 * the latency tests, so it must never be early and never reorder.
 */
export interface HoldQueue<T> {
  /** Queues one reply (or sends it at once when nothing needs holding). */
  push(item: T): void;
  /** Drops held replies; call when the connection closes. */
  dispose(): void;
}

/**
 * How a hold waits out its last stretch. `timer`: whole-millisecond setTimeout re-armed until the
 * deadline, so a 25 ms hold is released at 25–27 ms. `precise`: setTimeout to ~2 ms before the
 * deadline, then setImmediate polling of the monotonic clock, released within tens of µs (costs CPU).
 */
export const HOLD_MODES = ["timer", "precise"] as const;
export type HoldMode = (typeof HOLD_MODES)[number];

/**
 * Precise mode polls this close to a deadline. Node's timers wake up to ~1 ms late (whole-ms poll
 * timeouts on a cached loop time), so the timer aims this far ahead and polling covers the rest.
 * The cost: while any held reply is within SPIN_MS of its deadline the process never sleeps; at a
 * steady 1000 replies/s the deadlines are ~1 ms apart, so that is one core kept at 100 %. Worth it
 * only where the hold is a measurement's ground truth (bench/latency-truth.ts, on a core of its own).
 */
const SPIN_MS = 2;

/** Parses a `?delay=<ms>` value: the fallback when absent, undefined when it is not a non-negative number. */
export function parseDelay(raw: string | null | undefined, fallback: number): number | undefined {
  if (raw === null || raw === undefined) return fallback;
  const n = Number(raw);
  return raw.trim() !== "" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** One per server: owns the stall instant and every pending hold timer so close() can drop them all. */
export class EchoHold {
  /** Every hold applied, from arrival to the reply's send call (delay 0 records 0). */
  readonly stats = new HoldStats();
  private stalledUntil = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly polls = new Set<NodeJS.Immediate>();

  constructor(private readonly mode: HoldMode = "timer") {}

  /** Holds every reply (new and already delayed ones) until `ms` from now, then releases them in order. */
  stall(ms: number): void {
    this.stalledUntil = Math.max(this.stalledUntil, Date.now() + ms);
  }

  /** Clears every pending timer (server shutdown). */
  clear(): void {
    for (const t of this.timers) clearTimeout(t);
    for (const p of this.polls) clearImmediate(p);
    this.timers.clear();
    this.polls.clear();
  }

  /** A per-connection FIFO that hands each item to `deliver` once its hold is over. */
  queue<T>(delayMs: number, deliver: (item: T) => void): HoldQueue<T> {
    const items: Array<{ due: number; item: T }> = [];
    let timer: NodeJS.Timeout | undefined;
    let poll: NodeJS.Immediate | undefined;
    const disarm = () => {
      if (timer) {
        clearTimeout(timer);
        this.timers.delete(timer);
      }
      if (poll) {
        clearImmediate(poll);
        this.polls.delete(poll);
      }
      timer = poll = undefined;
    };

    const pump = () => {
      disarm();
      const stalledFor = this.stalledUntil - Date.now();
      let now = performance.now();
      while (items.length > 0 && stalledFor <= 0 && items[0]!.due <= now) {
        const { due, item } = items.shift()!;
        this.stats.record((now - (due - delayMs)) * 1000);
        deliver(item);
        now = performance.now();
      }
      if (items.length === 0) return;
      const wait = Math.max(items[0]!.due - now, stalledFor);
      if (this.mode === "precise") {
        if (wait <= SPIN_MS) {
          poll = setImmediate(pump);
          this.polls.add(poll);
          return;
        }
        timer = setTimeout(pump, Math.floor(wait - SPIN_MS));
      } else {
        // Node's timers run off a cached millisecond loop time and can fire up to ~1 ms early, so
        // pump re-checks the monotonic clock and re-arms rather than trusting the timer.
        timer = setTimeout(pump, Math.max(1, Math.ceil(wait)));
      }
      this.timers.add(timer);
    };

    return {
      push: (item: T) => {
        if (delayMs <= 0 && items.length === 0 && this.stalledUntil <= Date.now()) {
          this.stats.record(0);
          return deliver(item);
        }
        items.push({ due: performance.now() + delayMs, item });
        if (timer === undefined && poll === undefined) pump();
      },
      dispose: () => {
        disarm();
        items.length = 0;
      },
    };
  }
}
