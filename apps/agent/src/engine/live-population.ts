import { RetiringConnections } from "./retiring-connections";
import type { PopulationHost } from "./stage-population";

/** What a live population needs of its shard engine: the stage population's host, and a connection's slots still to come. */
export interface LivePopulationHost extends Omit<PopulationHost, "attempt"> {
  /** Slots of `id`'s schedule from `nowUs` to its end not yet handed out (0 in aggregate: the others take them). */
  unsentOf(id: number, nowUs: number): number;
}

/**
 * The connections of a shard without stages, as a live connections change moves them: ids below
 * `limit` are attempted, the plan's at connections.rate from the start, those a change adds at the
 * same rate from the change's instant; a change down retires the newest members as a falling stage
 * does (they stop sending at once, their slots still to come leave the expected count, and they close
 * once what they await is in or has timed out). Failed and dropped connections are not replaced.
 */
export class LivePopulation {
  /** Ids attempted, or to be attempted, are below this. */
  private end: number;
  /** Ramps of attempts at connections.rate: the plan's from the start (fromUs null: the start instant), then one per change that added ids when every id before had been attempted. */
  private readonly ramps: { firstId: number; fromUs: number | null }[] = [{ firstId: 0, fromUs: null }];
  private readonly retired = new Set<number>();
  private readonly retiring: RetiringConnections;
  private readonly retireOnOpen = new Set<number>();

  constructor(
    /** The plan's count for this shard. */
    readonly planned: number,
    private readonly host: LivePopulationHost,
    private readonly t0Us: () => number,
    private readonly gapUs: number,
    timeoutUs: number,
  ) {
    this.end = planned;
    this.retiring = new RetiringConnections(host, timeoutUs);
  }

  /** Connections are attempted with ids below this. */
  get limit(): number {
    return this.end;
  }

  /** The members: attempted or still to attempt, less those retired. */
  get members(): number {
    return this.end - this.retired.size;
  }

  /** When connection `id` is (or was) due to be attempted. */
  attemptAt(id: number): number {
    let ramp = this.ramps[0]!;
    for (const r of this.ramps) if (r.firstId <= id) ramp = r;
    return (ramp.fromUs ?? this.t0Us()) + (id - ramp.firstId) * this.gapUs;
  }

  /** Brings the members to `target` from `atUs`; `attempted` ids have been attempted already. */
  change(target: number, atUs: number, attempted: number): void {
    if (target > this.members) {
      // New ids, never reused ones (replies and deliveries are keyed by id): they follow the ramp
      // still under way, or start one of their own at the change's instant.
      if (attempted >= this.end) this.ramps.push({ firstId: this.end, fromUs: atUs });
      this.end += target - this.members;
      return;
    }
    for (let id = this.end - 1; id >= 0 && this.members > target; id--) {
      if (this.retired.has(id)) continue;
      // Not attempted yet: it never will be.
      if (id >= attempted && id === this.end - 1) {
        this.end--;
        continue;
      }
      this.retired.add(id);
      if (this.host.isConnecting(id)) this.retireOnOpen.add(id);
      else if (this.host.isOpen(id)) this.retire(id, atUs);
    }
  }

  /** Connection `id` opened; false when a change retired it while it connected (it has retired at once). */
  opened(id: number, nowUs: number): boolean {
    if (!this.retireOnOpen.delete(id)) return true;
    this.retire(id, nowUs);
    return false;
  }

  /** Closes every retiring connection whose awaited messages are all in, or whose wait is over. */
  settle(nowUs: number): void {
    this.retiring.settle(nowUs);
  }

  /** Something arrived on `id`: a retiring connection closes once nothing it awaits is left. */
  received(id: number): void {
    this.retiring.received(id);
  }

  /** The server (or the network) closed `id`; true when it was retiring (it no longer counted as active). */
  dropped(id: number): boolean {
    return this.retiring.dropped(id);
  }

  /** When settle next has work (Infinity when none). */
  nextDeadline(): number {
    return this.retiring.nextDeadline();
  }

  private retire(id: number, nowUs: number): void {
    this.retiring.retire(id, this.host.unsentOf(id, nowUs), nowUs);
  }
}
