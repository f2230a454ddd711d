/** What a delivery turned out to be (besides a timed one, which returns its intended send time). */
export const DELIVERY = { duplicate: -1, late: -2, unknown: -3, retired: -4, preJoin: -5, lateJoiner: -6 } as const;

const WAITING = 0,
  RECEIVED = 1,
  LOST = 2;
const NONE: ReadonlyMap<number, number> = new Map();

interface Entry {
  sender: number;
  seq: number;
  intendedUs: number;
  deadlineUs: number;
  /** Receiver → WAITING, RECEIVED or LOST: the room's members (bar the sender) when it was sent. */
  receivers: Map<number, number> | ReadonlyMap<number, number>;
  waiting: number;
  /** The tracker's tick when it was sent (see DeliveryTracker.lastTick). */
  tick: number;
}

/** Whether a member that joined at tick `joined` joined after a message sent at tick `sent` (ticks wrap at 2^32). */
const joinedAfter = (joined: number | undefined, sent: number) => joined !== undefined && ((joined - sent) | 0) > 0;

/**
 * Broadcast and group deliveries of this shard's own messages, one per (message, receiver). A
 * message is expected by exactly the members of its sender's room that were open when it was
 * sent, so expected = received + lost holds exactly: a receiver that leaves loses what it still
 * awaited, one that joins later expects only what is sent after. A message whose deliveries are
 * all in is forgotten at once, so memory follows the deliveries in flight, not the timeout.
 *
 * A copy that reaches a member which joined after the message was sent (the server had it in
 * the room by the time it fanned the message out) was never expected: it is a late joiner's copy
 * (DELIVERY.lateJoiner, `deliveries.late_joiner`), counted apart from deliveries and never a
 * duplicate, whether it arrives while the message's expected copies are awaited or after they are
 * all in. Joins and sends share one counter (a tick, carried in the message), so "after" is exact.
 *
 * Entries sit in send order, which is intended-time order, so expiry only looks at the head.
 */
export class DeliveryTracker {
  private readonly rooms = new Map<string, Set<number>>();
  private readonly roomOf: (string | undefined)[] = [];
  private readonly pending: (Map<number, Entry> | undefined)[] = [];
  private readonly sentBy: number[] = [];
  /** Per sender, seqs that had a loss: a delivery of one after it was forgotten is late, not a duplicate. */
  private readonly lossy: (Set<number> | undefined)[] = [];
  /** Per receiver, the newest seq received from each sender, to count out-of-order deliveries. */
  private readonly newest: (Map<number, number> | undefined)[] = [];
  /** Per receiver, deliveries it awaits (so a retiring member can close once they are in). */
  private readonly waitingFor: number[] = [];
  /** Members that left the room on our own account and still await deliveries sent before. */
  private readonly retired = new Set<number>();
  /**
   * Per member, the first seq of each sender it was expected for (the sender's count when it
   * joined): a copy of an earlier, already settled message is one the server handed it because it
   * had it in the room before Volley did (a flow's setup joins first), not a duplicate. Only kept
   * with `preJoin` (flows): the snapshot costs one entry per sender that had sent at each join, so
   * O(members²) in a room that sends while it fills, which plans whose driver joins need not pay.
   */
  private readonly joinedFrom: (Map<number, number> | undefined)[] = [];
  /** Flows join rooms in their own setup steps, before Volley counts the member in. */
  preJoin = false;
  private queue: Entry[] = [];
  private head = 0;
  private waitingTotal = 0;
  /** Counts joins and sends, so a copy's send can be placed before or after a member's join. */
  private ticks = 0;
  /** Per member, the tick of its join. */
  private readonly joinTick: number[] = [];
  /** The tick of the last message registered by sent(): the message carries it (message-codec). */
  lastTick = 0;

  constructor(private readonly timeoutUs: number) {}

  /** Deliveries expected and neither received nor counted lost. */
  get outstanding(): number {
    return this.waitingTotal;
  }

  join(id: number, room: string): void {
    let members = this.rooms.get(room);
    if (!members) this.rooms.set(room, (members = new Set()));
    if (this.preJoin) {
      let from: Map<number, number> | undefined;
      for (const m of members) {
        const sent = this.sentBy[m] ?? 0;
        if (sent > 0) (from ??= new Map()).set(m, sent);
      }
      this.joinedFrom[id] = from;
    }
    members.add(id);
    this.roomOf[id] = room;
    this.joinTick[id] = this.ticks = (this.ticks + 1) >>> 0;
  }

  /** Deliveries `id` awaits. */
  outstandingFor(id: number): number {
    return this.waitingFor[id] ?? 0;
  }

  /** Calls `fn` with the intended send time of every delivery still awaited (once per receiver). */
  forEachAwaited(fn: (intendedUs: number) => void): void {
    for (let i = this.head; i < this.queue.length; i++) {
      const e = this.queue[i]!;
      for (let n = 0; n < e.waiting; n++) fn(e.intendedUs);
    }
  }

  /**
   * We are closing member `id` (a falling stage): messages sent from now on do not expect it, while
   * those sent before still do, until they arrive or time out. Copies the server still hands it of
   * later messages are neither expected nor timed.
   */
  retire(id: number): void {
    const room = this.roomOf[id];
    if (room === undefined) return;
    this.rooms.get(room)?.delete(id);
    this.retired.add(id);
  }

  /** A member is gone: every delivery it still awaited is lost. Returns how many. */
  leave(id: number): number {
    this.retired.delete(id);
    const room = this.roomOf[id];
    if (room === undefined) return 0;
    this.roomOf[id] = undefined;
    this.rooms.get(room)?.delete(id);
    let lost = 0;
    for (let i = this.head; i < this.queue.length; i++) {
      const e = this.queue[i]!;
      if (e.receivers.get(id) === WAITING) {
        this.markLost(e, id);
        lost++;
      }
    }
    return lost;
  }

  /** Registers a message sent into its sender's room; returns how many deliveries it calls for. */
  sent(sender: number, seq: number, intendedUs: number): number {
    this.sentBy[sender] = Math.max(this.sentBy[sender] ?? 0, seq + 1);
    const tick = (this.lastTick = this.ticks = (this.ticks + 1) >>> 0);
    const room = this.roomOf[sender];
    const members = room === undefined ? undefined : this.rooms.get(room);
    if (!members || members.size <= 1) return 0;
    const receivers = new Map<number, number>();
    for (const m of members) {
      if (m === sender) continue;
      receivers.set(m, WAITING);
      this.waitingFor[m] = (this.waitingFor[m] ?? 0) + 1;
    }
    const entry: Entry = { sender, seq, intendedUs, deadlineUs: intendedUs + this.timeoutUs, receivers, waiting: receivers.size, tick };
    let bySeq = this.pending[sender];
    if (!bySeq) this.pending[sender] = bySeq = new Map();
    bySeq.set(seq, entry);
    this.queue.push(entry);
    this.waitingTotal += entry.waiting;
    return entry.waiting;
  }

  /**
   * A delivery of (sender, seq) to `receiver`: its intended send time when it is to be timed, or
   * one of DELIVERY's codes. `sentTick`: the tick the message carries (absent for flows, whose
   * messages are the application's own). A copy to a member that joined after the send is
   * DELIVERY.lateJoiner. Flows join rooms in their setup, before Volley counts the member in, so
   * there such a copy is the server's pre-join delivery: `extra` is set, and it is timed and counts
   * as expected after all.
   */
  deliver(receiver: number, sender: number, seq: number, out: { extra: boolean; outOfOrder: boolean }, sentTick?: number): number {
    out.extra = out.outOfOrder = false;
    if (!Number.isInteger(seq) || seq < 0 || seq >= (this.sentBy[sender] ?? 0)) return DELIVERY.unknown;
    const entry = this.pending[sender]?.get(seq);
    if (!entry) {
      // All its expected copies are in (or counted lost): a copy to a member that joined since is not a duplicate.
      if (!this.preJoin && sentTick !== undefined && joinedAfter(this.joinTick[receiver], sentTick)) return DELIVERY.lateJoiner;
      if (this.lossy[sender]?.has(seq)) return DELIVERY.late;
      return seq < (this.joinedFrom[receiver]?.get(sender) ?? 0) && !this.preJoined(receiver, sender, seq) ? DELIVERY.preJoin : DELIVERY.duplicate;
    }
    const state = entry.receivers.get(receiver);
    if (state === RECEIVED) return DELIVERY.duplicate;
    if (state === LOST) return DELIVERY.late;
    if (state === undefined) {
      if (this.retired.has(receiver)) return DELIVERY.retired;
      if (!this.preJoin && joinedAfter(this.joinTick[receiver], entry.tick)) return DELIVERY.lateJoiner;
      out.extra = true;
    } else {
      entry.waiting--;
      this.waitingTotal--;
      this.waitingFor[receiver]!--;
    }
    (entry.receivers as Map<number, number>).set(receiver, RECEIVED);
    let newest = this.newest[receiver];
    if (!newest) this.newest[receiver] = newest = new Map();
    const prev = newest.get(sender) ?? -1;
    if (seq < prev) out.outOfOrder = true;
    else newest.set(sender, seq);
    if (entry.waiting === 0) this.forget(entry);
    return entry.intendedUs;
  }

  /** Remembers a pre-join copy, so a second copy of it is a duplicate. */
  private preJoined(receiver: number, sender: number, seq: number): boolean {
    const key = `${receiver}:${sender}:${seq}`;
    if (this.preJoinSeen.has(key)) return true;
    this.preJoinSeen.add(key);
    return false;
  }

  private readonly preJoinSeen = new Set<string>();

  /** Counts every delivery whose deadline has passed as lost; returns how many. */
  expire(nowUs: number): number {
    let lost = 0;
    while (this.head < this.queue.length && this.queue[this.head]!.deadlineUs <= nowUs) {
      const e = this.queue[this.head]!;
      lost += this.loseAll(e);
      this.shift();
    }
    return lost;
  }

  /** Every delivery still awaited counts lost (the wait is over). Returns how many. */
  abandonAll(): number {
    let lost = 0;
    for (let i = this.head; i < this.queue.length; i++) lost += this.loseAll(this.queue[i]!);
    this.queue = [];
    this.head = 0;
    return lost;
  }

  /** When expiry next has work (Infinity when nothing is awaited). */
  nextDeadline(): number {
    while (this.head < this.queue.length) {
      const e = this.queue[this.head]!;
      if (e.waiting > 0) return e.deadlineUs;
      this.shift();
    }
    return Infinity;
  }

  private loseAll(e: Entry): number {
    if (e.waiting === 0) return 0;
    let lost = 0;
    for (const [id, state] of e.receivers) {
      if (state !== WAITING) continue;
      this.markLost(e, id);
      lost++;
    }
    return lost;
  }

  private markLost(e: Entry, receiver: number): void {
    (e.receivers as Map<number, number>).set(receiver, LOST);
    e.waiting--;
    this.waitingTotal--;
    this.waitingFor[receiver]!--;
    let lossy = this.lossy[e.sender];
    if (!lossy) this.lossy[e.sender] = lossy = new Set();
    lossy.add(e.seq);
    if (e.waiting === 0) this.forget(e);
  }

  /** Done with: dropped from the lookup, and its receivers let go while it waits its turn in the queue. */
  private forget(e: Entry): void {
    this.pending[e.sender]?.delete(e.seq);
    e.receivers = NONE;
  }

  private shift(): void {
    this.head++;
    // Compact now and then so the queue does not grow for the whole run.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
