import type { Stage } from "@volley/contracts";
import { RetiringConnections } from "./retiring-connections";
import { StagePlan } from "./stage-plan";

/** What the population needs of its shard engine. */
export interface PopulationHost {
  /** Attempts a new connection with this id. */
  attempt(id: number): void;
  /** Whether connection `id` is still connecting, or open (and not retiring). */
  isConnecting(id: number): boolean;
  isOpen(id: number): boolean;
  /** Stops `id` sending (it no longer counts as active) and takes its unsent slots (`unsent`) out of expected. */
  retire(id: number, unsent: number): void;
  /** Replies and deliveries `id` still awaits. */
  outstandingFor(id: number): number;
  /** Closes a retired connection: what it awaited is in or has been counted lost at its deadline. */
  close(id: number): void;
}

/**
 * connections.stages: the open population follows the stage line. Rising, a new connection is
 * attempted each time the line passes a whole number; falling, the newest connection retires. A
 * retiring connection stops sending at once, its not-yet-due slots leave the expected count, and
 * it stays open until every reply and delivery it awaits is in or has timed out (message.timeout),
 * then closes: what it loses, it loses by the timeout rule, never by our own close. Failed and
 * dropped connections are not replaced (as in a count/rate run); one still connecting when the
 * line falls retires as soon as it opens.
 */
export class StagePopulation {
  readonly plan: StagePlan;
  /** Ids in attempt order that have not been retired (the newest retires first). */
  private readonly members: number[] = [];
  private readonly retiring: RetiringConnections;
  private readonly retireOnOpen = new Set<number>();
  /** Per connection: slots added to expected at open, its schedule's end, and slots sent. */
  private readonly plannedSlots: number[] = [];
  private readonly sendUntil: number[] = [];
  private readonly sentBy: number[] = [];
  private nextId = 0;

  constructor(
    stages: readonly Stage[],
    private readonly host: PopulationHost,
    /** The storm's canary keeps this id; crowd ids skip it. -1 without a canary. */
    private readonly canaryId: number,
    private readonly constant: boolean,
    private readonly intervalUs: number,
    timeoutUs: number,
  ) {
    this.plan = new StagePlan(stages);
    this.retiring = new RetiringConnections(host, timeoutUs);
  }

  /** Crowd connections attempted so far. */
  get attempts(): number {
    return this.nextId;
  }

  /** Attempts and retirements that bring the population to the line's count `tUs` after the start. */
  follow(tUs: number, nowUs: number): void {
    const target = this.plan.targetAt(tUs);
    while (this.members.length < target) {
      let id = this.nextId++;
      // Ids are never reused (replies and deliveries are keyed by them).
      if (this.canaryId >= 0 && id >= this.canaryId) id++;
      this.members.push(id);
      this.host.attempt(id);
    }
    while (this.members.length > target) {
      const id = this.members.pop()!;
      if (this.host.isConnecting(id)) this.retireOnOpen.add(id);
      else if (this.host.isOpen(id)) this.retire(id, nowUs);
      // Failed or dropped: already gone, it only leaves the population.
    }
  }

  /** Connection `id` opened; false when the line fell while it connected (it has retired at once). */
  opened(id: number, nowUs: number): boolean {
    if (!this.retireOnOpen.delete(id)) return true;
    this.retire(id, nowUs);
    return false;
  }

  /** Its schedule runs to `untilUs` and added `slots` to expected. */
  scheduled(id: number, untilUs: number, slots: number): void {
    this.sendUntil[id] = untilUs;
    this.plannedSlots[id] = slots;
  }

  sent(id: number): void {
    this.sentBy[id] = (this.sentBy[id] ?? 0) + 1;
  }

  /** Closes every retiring connection whose awaited messages are all in, or whose wait is over. */
  settle(nowUs: number): void {
    this.retiring.settle(nowUs);
  }

  /** Something arrived on `id`: a retiring connection closes once nothing it awaits is left. */
  received(id: number): void {
    this.retiring.received(id);
  }

  /** The server (or the network) closed `id`; true when it was retiring (so it no longer counted as active). */
  dropped(id: number): boolean {
    return this.retiring.dropped(id);
  }

  /** When settle or follow next has work (Infinity when neither has). */
  nextDeadline(t0Us: number, nowUs: number): number {
    return Math.min(t0Us + this.plan.nextChange(nowUs - t0Us), this.retiring.nextDeadline());
  }

  private retire(id: number, nowUs: number): void {
    // The slots it will not send were never going to be sent: they leave the expected count.
    const planned = this.plannedSlots[id];
    let unsent = 0;
    if (planned !== undefined) unsent = Math.max(0, this.constant ? planned - (this.sentBy[id] ?? 0) : (this.sendUntil[id]! - nowUs) / this.intervalUs);
    this.retiring.retire(id, unsent, nowUs);
  }
}
