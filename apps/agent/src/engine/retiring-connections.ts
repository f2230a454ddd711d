import type { PopulationHost } from "./stage-population";

/**
 * Connections leaving a population (a falling stage, a live change down): each stops sending at
 * once, its slots still to come leave the expected count, and it stays open until every reply and
 * delivery it awaits is in or has timed out (message.timeout), then closes: what it loses, it loses
 * by the timeout rule, never by our own close.
 */
export class RetiringConnections {
  /** Retiring connections and the instant they close whatever is still awaited. */
  private readonly retiring = new Map<number, number>();

  constructor(
    private readonly host: Pick<PopulationHost, "retire" | "outstandingFor" | "close">,
    private readonly timeoutUs: number,
  ) {}

  /** Retires `id`, whose `unsent` slots leave the expected count. */
  retire(id: number, unsent: number, nowUs: number): void {
    this.host.retire(id, unsent);
    if (this.host.outstandingFor(id) === 0) this.close(id);
    else this.retiring.set(id, nowUs + this.timeoutUs);
  }

  /** Closes every retiring connection whose awaited messages are all in, or whose wait is over. */
  settle(nowUs: number): void {
    for (const [id, deadline] of this.retiring) if (deadline <= nowUs || this.host.outstandingFor(id) === 0) this.close(id);
  }

  /** Something arrived on `id`: a retiring connection closes once nothing it awaits is left. */
  received(id: number): void {
    if (this.retiring.has(id) && this.host.outstandingFor(id) === 0) this.close(id);
  }

  /** The server (or the network) closed `id`; true when it was retiring (so it no longer counted as active). */
  dropped(id: number): boolean {
    return this.retiring.delete(id);
  }

  /** The next instant settle has work (Infinity when none). */
  nextDeadline(): number {
    let next = Infinity;
    for (const deadline of this.retiring.values()) next = Math.min(next, deadline);
    return next;
  }

  private close(id: number): void {
    this.retiring.delete(id);
    this.host.close(id);
  }
}
