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

/** Parses a `?delay=<ms>` value: the fallback when absent, undefined when it is not a non-negative number. */
export function parseDelay(raw: string | null | undefined, fallback: number): number | undefined {
  if (raw === null || raw === undefined) return fallback;
  const n = Number(raw);
  return raw.trim() !== "" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** One per server: owns the stall instant and every pending hold timer so close() can drop them all. */
export class EchoHold {
  private stalledUntil = 0;
  private readonly pending = new Set<NodeJS.Timeout>();

  /** Holds every reply (new and already delayed ones) until `ms` from now, then releases them in order. */
  stall(ms: number): void {
    this.stalledUntil = Math.max(this.stalledUntil, Date.now() + ms);
  }

  /** Clears every pending timer (server shutdown). */
  clear(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }

  /** A per-connection FIFO that hands each item to `deliver` once its hold is over. */
  queue<T>(delayMs: number, deliver: (item: T) => void): HoldQueue<T> {
    const items: Array<{ due: number; item: T }> = [];
    let timer: NodeJS.Timeout | undefined;

    const pump = () => {
      if (timer) this.pending.delete(timer);
      timer = undefined;
      const now = performance.now();
      const stalledFor = this.stalledUntil - Date.now();
      while (items.length > 0 && stalledFor <= 0 && items[0]!.due <= now) deliver(items.shift()!.item);
      if (items.length === 0) return;
      // Node's timers run off a cached millisecond loop time and can fire up to ~1 ms early, so
      // pump re-checks the monotonic clock and re-arms rather than trusting the timer.
      const wait = Math.max(items[0]!.due - now, stalledFor);
      timer = setTimeout(pump, Math.max(1, Math.ceil(wait)));
      this.pending.add(timer);
    };

    return {
      push: (item: T) => {
        if (delayMs <= 0 && items.length === 0 && this.stalledUntil <= Date.now()) return deliver(item);
        items.push({ due: performance.now() + delayMs, item });
        if (timer === undefined) pump();
      },
      dispose: () => {
        if (timer) {
          clearTimeout(timer);
          this.pending.delete(timer);
        }
        timer = undefined;
        items.length = 0;
      },
    };
  }
}
