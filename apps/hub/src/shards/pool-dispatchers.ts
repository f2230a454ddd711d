import type { Logger } from "pino";
import { errorMessage, seconds } from "../util/wait";
import type { PoolDispatcher } from "./pool-dispatcher";
import { poolOrg } from "./pool-key";

export interface PoolDispatchersOptions {
  /** Builds (and starts) the dispatcher of one pool key. */
  create: (pool: string) => PoolDispatcher;
  /** Whether any agent (connected, or reconnecting within its grace) is in the pool on this hub. */
  hasAgents: (pool: string) => boolean;
  /** Pools one org may hold on this hub at once, counting those waiting out `releaseAfterMs`. */
  maxPoolsPerOrg: number;
  /** Pools all orgs owned by one account may hold on this hub at once (absent: no limit past the per-org one). */
  maxPoolsPerAccount?: number;
  /** A pool's dispatcher is closed once it has had no agents for this long. */
  releaseAfterMs: number;
  log: Logger;
}

/**
 * The shard dispatchers of this hub, one per pool that has agents. Each holds a BullMQ worker and
 * its own blocking Redis connection, and pool names come from agents: so pools are counted per org
 * and per owning account (one account may own several orgs; an agent announcing one more is refused), and a pool whose agents have all gone for
 * `releaseAfterMs` gives its worker and connection back; the next agent of that pool recreates them.
 */
export class PoolDispatchers {
  private readonly live = new Map<string, PoolDispatcher>();
  /** The account (org owner) each live pool counts against, as admit was told. */
  private readonly accounts = new Map<string, string>();
  private readonly releaseTimers = new Map<string, NodeJS.Timeout>();
  private readonly closing = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly opts: PoolDispatchersOptions) {}

  /**
   * Called as an agent of `pool` (a pool key of `org.orgId`, owned by `org.account`) is admitted,
   * before it attaches: null and the pool's dispatcher exists (reserved, synchronously, so
   * concurrent handshakes cannot overshoot the limits), or why the agent is refused.
   */
  admit(org: { orgId: string; account: string }, pool: string): string | null {
    if (this.stopped) return "hub shutting down; the agent will reconnect to another hub or after the restart";
    if (!this.live.has(pool)) {
      const counts = `a pool counts until ${seconds(this.opts.releaseAfterMs)} after its last agent left`;
      const held = this.pools().filter((p) => poolOrg(p) === org.orgId).length;
      if (held >= this.opts.maxPoolsPerOrg) {
        return (
          `pool limit reached: this organization already has ${held} pools on this hub (HUB_MAX_POOLS_PER_ORG=${this.opts.maxPoolsPerOrg}; ` +
          `${counts}); connect the agent to an existing pool, or ask the hub's operator to raise HUB_MAX_POOLS_PER_ORG`
        );
      }
      const max = this.opts.maxPoolsPerAccount;
      const owned = this.pools().filter((p) => this.accounts.get(p) === org.account).length;
      if (max !== undefined && owned >= max) {
        return (
          `pool limit reached: the organizations owned by this organization's owner already have ${owned} pools on this hub (HUB_MAX_POOLS_PER_ACCOUNT=${max}; ` +
          `${counts}); connect the agent to an existing pool of one of them, or ask the hub's operator to raise HUB_MAX_POOLS_PER_ACCOUNT`
        );
      }
    }
    this.accounts.set(pool, org.account);
    this.ensure(pool);
    return null;
  }

  /** An agent joined the pool: its dispatcher runs (recreated if it was released) and stays. */
  ensure(pool: string): void {
    if (this.stopped) return;
    if (!this.live.has(pool)) {
      this.live.set(pool, this.opts.create(pool));
      this.opts.log.info({ pool }, "shard worker started for pool");
    }
    if (this.opts.hasAgents(pool)) this.cancelRelease(pool);
    // Reserved by a handshake that may yet fail: released like a pool its last agent left.
    else this.vacated(pool);
  }

  /** The pool's last agent left: release its dispatcher unless an agent comes back in time. */
  vacated(pool: string): void {
    if (this.stopped || !this.live.has(pool) || this.releaseTimers.has(pool)) return;
    const timer = setTimeout(() => {
      this.releaseTimers.delete(pool);
      if (this.opts.hasAgents(pool)) return;
      this.release(pool);
    }, this.opts.releaseAfterMs);
    timer.unref();
    this.releaseTimers.set(pool, timer);
  }

  private cancelRelease(pool: string): void {
    const timer = this.releaseTimers.get(pool);
    if (timer) clearTimeout(timer);
    this.releaseTimers.delete(pool);
  }

  private release(pool: string): void {
    const d = this.live.get(pool);
    if (!d) return;
    // Out of the map at once: an agent arriving while this one closes gets a fresh dispatcher.
    this.live.delete(pool);
    this.accounts.delete(pool);
    const p = (async () => {
      await d.stop();
      // A job fetched just before the last agent left is put back by its dispatcher; wait for that.
      await d.drained();
      await d.close();
      this.opts.log.info({ pool }, "shard worker released: the pool has had no agents");
    })()
      .catch((err) => this.opts.log.error({ pool, err: errorMessage(err) }, "could not release shard worker"))
      .finally(() => this.closing.delete(p));
    this.closing.add(p);
  }

  /** Pool keys with a dispatcher on this hub (including those waiting to be released). */
  pools(): string[] {
    return [...this.live.keys()];
  }

  /** Stops creating and releasing dispatchers (shutdown); returns the live ones for the hub to stop and drain. */
  stopAll(): PoolDispatcher[] {
    this.stopped = true;
    for (const timer of this.releaseTimers.values()) clearTimeout(timer);
    this.releaseTimers.clear();
    return [...this.live.values()];
  }

  /** Resolves once dispatchers being released have closed. */
  async released(): Promise<void> {
    await Promise.allSettled([...this.closing]);
  }
}
