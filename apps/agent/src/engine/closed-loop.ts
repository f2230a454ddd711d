import { MinHeap } from "./min-heap";
import type { SendTurn } from "./send-turn";

/** What the closed loop needs from the engine. */
export interface ClosedLoopHost {
  isOpen(id: number): boolean;
  /** Sends user `id`'s next request, timed from `readyUs` (counted sent and expected). */
  send(id: number, readyUs: number): void;
  /** True while request `seq` of user `id` is still awaited (a late reply to an older one settles nothing). */
  awaits(id: number, seq: number): boolean;
  readonly turn: SendTurn;
}

/**
 * http-rps with `loop: closed`: every open connection is a user with at most one request in
 * flight. It sends when it opens, then again only once its reply is in (or failed, or timed out)
 * and `thinkUs` has passed, and never sooner than `minGapUs` after its previous send (the plan's
 * rate as a cap). Each send is timed from the moment the user was ready, so what the engine
 * records is a response time; the engine keeps it apart from open-loop latency.
 */
export class ClosedLoop {
  /** Users ready to send, by the time they become ready. */
  private readonly ready = new MinHeap();
  /** Users waiting for a reply, by the time their request times out (then they go on). */
  private readonly waiting = new MinHeap();
  /** Per user: when its last request was sent (-1: none in flight). */
  private readonly sentAt: number[] = [];
  private readonly lastReady: number[] = [];
  /** Per user: requests sent so far (its in-flight one is number sends − 1, the connection's sequence). */
  private readonly sends: number[] = [];
  endUs = Infinity;

  constructor(
    private readonly host: ClosedLoopHost,
    private readonly thinkUs: number,
    private readonly minGapUs: number,
    private readonly timeoutUs: number,
  ) {}

  /** A user's connection opened: it sends at once. */
  open(id: number, nowUs: number): void {
    this.sentAt[id] = -1;
    this.lastReady[id] = -Infinity;
    this.sends[id] = 0;
    this.ready.push(id, nowUs);
  }

  /** Something arrived for user `id`: once its request in flight is answered, it goes on. */
  settled(id: number, nowUs: number): void {
    if (this.sentAt[id] === undefined || this.sentAt[id] < 0 || this.host.awaits(id, this.sends[id]! - 1)) return;
    this.release(id, nowUs);
  }

  /** A per-request error: the reply will never come, whatever the tracker still holds. */
  failed(id: number, nowUs: number): void {
    if (this.sentAt[id] === undefined || this.sentAt[id] < 0) return;
    this.release(id, nowUs);
  }

  private release(id: number, nowUs: number): void {
    this.sentAt[id] = -1;
    this.ready.push(id, Math.max(nowUs + this.thinkUs, this.lastReady[id]! + this.minGapUs));
  }

  /** Sends for every ready user, within the turn; frees users whose request timed out. */
  due(nowUs: number): void {
    const { waiting, ready, host } = this;
    while (waiting.peekKey() <= nowUs) {
      const deadline = waiting.peekKey();
      const id = waiting.pop()!;
      // Stale entry: that request was answered and the user has sent again since.
      if (this.sentAt[id]! >= 0 && this.sentAt[id]! + this.timeoutUs === deadline) this.release(id, nowUs);
    }
    while (ready.peekKey() <= nowUs && ready.peekKey() < this.endUs && host.turn.more()) {
      const at = ready.peekKey();
      const id = ready.pop()!;
      if (!host.isOpen(id)) continue;
      this.lastReady[id] = at;
      this.sentAt[id] = at;
      waiting.push(id, at + this.timeoutUs);
      this.sends[id]!++;
      host.send(id, at);
    }
  }

  /** When a user next sends before the end (Infinity when none): the shard is not drained before. */
  nextReady(): number {
    const r = this.ready.peekKey();
    return r < this.endUs ? r : Infinity;
  }

  /** When the loop next has work (Infinity when none). */
  nextDue(): number {
    const r = this.ready.peekKey();
    return Math.min(r < this.endUs ? r : Infinity, this.waiting.peekKey());
  }
}
