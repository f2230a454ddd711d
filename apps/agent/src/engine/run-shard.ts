import type { Plan } from "@volley/contracts";
import type { Driver } from "../drivers/driver";
import { driverFor } from "../drivers/driver-for";
import { UsersEngine } from "../users/users-engine";
import { systemClock } from "./clock";
import { ShardEngine } from "./shard-engine";
import { warmShard, type WarmUp } from "./shard-warmup";
import type { RunShardOptions, ShardOutcome } from "./types";

/** A warm-up ends this long before the start instant: what it leaves behind (closing sockets, garbage) settles first. */
const WARM_MARGIN_MS = 60;
/** Arming ahead of a start instant not yet known (the CLI, a hub's assign): the most a warm-up may take. */
const ARM_BUDGET_MS = 400;
/** A shard armed this recently on this thread is not dry-run again in its lead (the hub's assign, then its start 300 ms ahead). */
const ARMED_FRESH_MS = 30_000;

/** The plan's driver, loaded on first use; a load that fails still fails each connection with why, never the process. */
async function loadDriver(protocol: string): Promise<Driver | undefined> {
  try {
    return await driverFor(protocol);
  } catch (err) {
    const why = `the ${protocol} driver could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
    return { protocol, connect: () => Promise.reject(new Error(why)) };
  }
}

/**
 * Arms this thread for `plan` before its start instant is known: loads its driver and warms the
 * engine (warmShard), so a shard started next on this thread starts warm. Never rejects.
 */
export async function armShard(plan: Plan): Promise<WarmUp> {
  await loadDriver(plan.target.protocol);
  return warmShard(plan, Date.now() + ARM_BUDGET_MS);
}

/**
 * Runs one shard's plan (already this agent's slice) and resolves when it has ended, after its last
 * frame went to onFrame. Needs no hub: the hub client and the standalone CLI both sit on this.
 * Whatever time is left before the start instant first warms the engine (warmShard), ending
 * WARM_MARGIN_MS before it, unless armShard just did; nothing of that reaches the target or the shard's frames.
 * Never rejects; failures end the shard "errored" with a reason a person can act on.
 */
export async function runShard(plan: Plan, opts: RunShardOptions): Promise<ShardOutcome> {
  const withDriver = { ...opts, driver: opts.driver ?? (await loadDriver(plan.target.protocol)) };
  const clock = opts.clock ?? systemClock();
  const untilMs = Date.now() + (opts.startAt - clock.hubNowMs()) - WARM_MARGIN_MS;
  if (!opts.signal?.aborted) await warmShard(plan, untilMs, { signal: opts.signal, reuseWithinMs: ARMED_FRESH_MS });
  return plan.scenario.kind === "users" ? new UsersEngine(plan, withDriver).run() : new ShardEngine(plan, withDriver).run();
}
