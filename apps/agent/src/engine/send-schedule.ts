import type { Arrival } from "./arrival";
import { MinHeap } from "./min-heap";
import type { SlotSink } from "./send-turn";

/** How the engine counts a schedule's slots (the expected count's arithmetic, which rerate must match). */
export interface SlotCounter {
  constant: boolean;
  /** Slots of a schedule from `fromUs` at `intervalUs` before `untilUs` (Poisson: the expected number). */
  between(fromUs: number, untilUs: number, intervalUs: number): number;
}

/**
 * The intended send times of a shard. Per connection: each open connection has its own arrival
 * schedule from the moment it opened, kept in one heap by next intended time. Aggregate: one
 * schedule from the first open, each slot on the next open connection in turn. Connections with a
 * schedule of their own (the storm's canary) sit in the heap in either mode.
 */
export class SendSchedule {
  private readonly heap = new MinHeap();
  private readonly schedT0: number[] = [];
  private readonly schedK: number[] = [];
  /** Per connection: its own end, when it sends for less than the whole run (stages: `duration` from its open). */
  private readonly schedEnd: number[] = [];
  /** Per connection: the intended time of its live heap entry; an entry left from before a reopen (a reconnect) is stale. */
  private readonly schedNext: number[] = [];
  private readonly own = new Map<number, Arrival>();
  /** Open connection ids for round-robin in aggregate mode; position kept for O(1) removal. */
  private readonly openList: number[] = [];
  private readonly openPos: number[] = [];
  private rr = 0;
  private aggT0 = -1;
  private aggK = 0;
  private aggDue = Infinity;
  private aggEnd = Infinity;
  endUs = Infinity;

  constructor(
    private readonly perConnection: boolean,
    private arrival: Arrival,
  ) {}

  /**
   * A connection opened at `nowUs`; `own` gives it a schedule apart from the plan's. Returns true
   * when this open started a schedule the plan's expected count is reckoned from (every open per
   * connection, the first in aggregate). `untilUs` ends this schedule before `endUs` (per
   * connection: this connection's; aggregate: the shared one, set by the first open).
   */
  open(id: number, nowUs: number, own?: Arrival, untilUs = Infinity): boolean {
    if (own || this.perConnection) {
      if (own) this.own.set(id, own);
      this.schedT0[id] = nowUs;
      this.schedK[id] = 0;
      this.schedEnd[id] = untilUs;
      const first = (own ?? this.arrival).next(0, nowUs, nowUs);
      this.schedNext[id] = Infinity;
      if (first < Math.min(untilUs, this.endUs)) {
        this.heap.push(id, first);
        this.schedNext[id] = first;
      }
      return !own;
    }
    this.openPos[id] = this.openList.length;
    this.openList.push(id);
    if (this.aggT0 >= 0) return false;
    this.aggT0 = nowUs;
    this.aggEnd = untilUs;
    this.aggDue = this.arrival.next(0, nowUs, nowUs);
    return true;
  }

  /**
   * Per connection: how many of connection `id`'s slots from `nowUs` on its schedule will never be
   * sent now that it is gone (the server closed it): constant arrival, exactly those left on its
   * grid before its end; Poisson, the expected number. 0 in aggregate mode (slots go to the others).
   */
  unsentOf(id: number, nowUs: number, intervalUs: number, constant: boolean): number {
    if (!this.perConnection || this.own.has(id) || this.schedT0[id] === undefined) return 0;
    const end = Math.min(this.endUs, this.schedEnd[id]!);
    const t0 = this.schedT0[id]!;
    if (end <= t0) return 0;
    if (!constant) return Math.max(0, Math.round((end - Math.max(nowUs, t0)) / intervalUs));
    // Slots k ≥ schedK (not yet handed out) with t0 + k·interval < end, counted as the schedule counts them.
    let n = Math.max(0, Math.ceil((end - t0) / intervalUs) - 1);
    while (n > 0 && t0 + n * intervalUs >= end) n--;
    while (t0 + (n + 1) * intervalUs < end) n++;
    return Math.max(0, n + 1 - this.schedK[id]!);
  }

  /**
   * A live rate change: from `atUs` on, the plan's schedules run on `arrival` (`newUs` apart, was
   * `oldUs`). Each schedule keeps its phase: its next slot is the first of the new grid, anchored at
   * its last slot, at or after `atUs`; a slot already due (or a connection's first) stays where it
   * was. Schedules of their own (the canary) keep their rate. Returns how many more slots (negative:
   * fewer) the open schedules now hand out before their ends, for the expected count.
   */
  rerate(arrival: Arrival, oldUs: number, newUs: number, atUs: number, isOpen: (id: number) => boolean, slots: SlotCounter): number {
    this.arrival = arrival;
    const constant = slots.constant;
    let delta = 0;
    // The next slot of a schedule whose pending slot `n` (slot `k` of its grid) is not yet due at atUs.
    const nextOf = (n: number, k: number): number => {
      if (k === 0 || n < atUs) return n;
      if (!constant) return arrival.next(1, atUs, atUs);
      const last = n - oldUs;
      const j = Math.max(1, Math.ceil((atUs - last) / newUs));
      return last + j * newUs;
    };
    const left = (t0: number, k: number, end: number, interval: number): number =>
      constant ? Math.max(0, slots.between(t0, end, interval) - k) : Math.max(0, (end - Math.max(atUs, t0)) / interval);
    if (this.perConnection) {
      for (let id = 0; id < this.schedT0.length; id++) {
        const n = this.schedNext[id];
        if (n === undefined || n === Infinity || this.own.has(id) || !isOpen(id)) continue;
        const end = Math.min(this.endUs, this.schedEnd[id]!);
        const before = left(this.schedT0[id]!, this.schedK[id]!, end, oldUs);
        const first = nextOf(n, this.schedK[id]!);
        this.schedT0[id] = first;
        this.schedK[id] = 0;
        this.schedNext[id] = Infinity;
        if (first < end) {
          if (first !== n) this.heap.push(id, first);
          this.schedNext[id] = first;
        }
        delta += (first < end ? left(first, 0, end, newUs) : 0) - before;
      }
    } else if (this.aggT0 >= 0 && this.aggDue !== Infinity) {
      const end = Math.min(this.endUs, this.aggEnd);
      const before = left(this.aggT0, this.aggK, end, oldUs);
      const first = nextOf(this.aggDue, this.aggK);
      this.aggT0 = first;
      this.aggK = 0;
      this.aggDue = first < end ? first : Infinity;
      delta += (first < end ? left(first, 0, end, newUs) : 0) - before;
    }
    return delta;
  }

  /** A connection is gone (its heap entries are skipped by `isOpen` when they come due). */
  close(id: number): void {
    if (this.perConnection || this.own.has(id)) return;
    const pos = this.openPos[id];
    if (pos === undefined || this.openList[pos] !== id) return;
    const last = this.openList.pop()!;
    if (last !== id) {
      this.openList[pos] = last;
      this.openPos[last] = pos;
    }
  }

  /**
   * Hands `sink` every slot whose intended time is at or before `nowUs`, in intended-time order per
   * schedule: sent, or shed when it is already hopelessly late. Stops early, leaving the rest due,
   * when the sink's turn is spent.
   */
  due(nowUs: number, sink: SlotSink): void {
    const heap = this.heap;
    const turn = sink.turn;
    while (heap.peekKey() <= nowUs && turn.more()) {
      const intended = heap.peekKey();
      const id = heap.pop()!;
      if (intended !== this.schedNext[id] || !sink.isOpen(id)) continue;
      if (intended < turn.shedBeforeUs) sink.shed(id, intended);
      else sink.send(id, intended);
      const k = ++this.schedK[id]!;
      const next = (this.own.get(id) ?? this.arrival).next(k, this.schedT0[id]!, intended);
      this.schedNext[id] = Infinity;
      if (next < Math.min(this.endUs, this.schedEnd[id]!)) {
        heap.push(id, next);
        this.schedNext[id] = next;
      }
    }
    const aggEnd = Math.min(this.endUs, this.aggEnd);
    while (this.aggDue <= nowUs && this.aggDue < aggEnd && turn.more()) {
      // With every connection gone, the slot passes unsent: there is nobody to send it on.
      if (this.openList.length > 0) {
        const id = this.openList[this.rr++ % this.openList.length]!;
        if (this.aggDue < turn.shedBeforeUs) sink.shed(id, this.aggDue);
        else sink.send(id, this.aggDue);
      }
      this.aggDue = this.arrival.next(++this.aggK, this.aggT0, this.aggDue);
    }
    if (this.aggDue >= aggEnd) this.aggDue = Infinity;
  }

  /** The next intended time of any schedule (Infinity when none). */
  nextDue(): number {
    return Math.min(this.heap.peekKey(), this.aggDue);
  }

  /**
   * The intended time after nextDue's, as far as it is known now (a prediction for the engine's
   * waker: a Poisson aggregate's next gap is not drawn yet, and a heap entry may be stale).
   */
  afterNextDue(): number {
    const heapFirst = this.heap.peekKey();
    if (heapFirst <= this.aggDue) return Math.min(this.heap.peekSecondKey(), this.aggDue);
    // The aggregate's slot is next (so it is finite): the one after is the heap's first or its own next.
    return Math.min(heapFirst, this.arrival.pure ? this.arrival.next(this.aggK + 1, this.aggT0, this.aggDue) : Infinity);
  }
}
