import type { ShardRate } from "@volley/contracts";

/** A live change as the engine takes it: the plan's rates (or connection count, `what`) times `scale` from `at` (hub-clock epoch ms). */
export type LiveRate = Pick<ShardRate, "scale" | "at" | "what">;

/**
 * Live rate changes for one running shard: the hub link (or a worker thread's port) pushes, the
 * engine listens. The latest change of each kind is kept, so an engine that starts listening after it came (a
 * worker thread still arming) still applies it; the engine ignores one it already applied.
 */
export class RateFeed {
  private listener: ((c: LiveRate) => void) | undefined;
  /** The latest change of each kind. */
  private readonly last = new Map<LiveRate["what"], LiveRate>();

  push(change: LiveRate): void {
    this.last.set(change.what, change);
    this.listener?.(change);
  }

  listen(listener: (c: LiveRate) => void): void {
    this.listener = listener;
    for (const c of this.last.values()) listener(c);
  }
}
