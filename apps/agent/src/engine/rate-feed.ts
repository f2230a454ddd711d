import type { ShardRate } from "@volley/contracts";

/** A live rate change as the engine takes it: the plan's rates times `scale` from `at` (hub-clock epoch ms). */
export type LiveRate = Pick<ShardRate, "scale" | "at">;

/**
 * Live rate changes for one running shard: the hub link (or a worker thread's port) pushes, the
 * engine listens. The latest change is kept, so an engine that starts listening after it came (a
 * worker thread still arming) still applies it; the engine ignores one it already applied.
 */
export class RateFeed {
  private listener: ((c: LiveRate) => void) | undefined;
  private last: LiveRate | undefined;

  push(change: LiveRate): void {
    this.last = change;
    this.listener?.(change);
  }

  listen(listener: (c: LiveRate) => void): void {
    this.listener = listener;
    if (this.last) listener(this.last);
  }
}
