import type { Plan } from "@volley/contracts";
import type { Driver } from "../drivers/driver";
import { driverFor } from "../drivers/driver-for";
import { UsersEngine } from "../users/users-engine";
import { ShardEngine } from "./shard-engine";
import type { RunShardOptions, ShardOutcome } from "./types";

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
 * Runs one shard's plan (already this agent's slice) and resolves when it has ended, after its last
 * frame went to onFrame. Needs no hub: the hub client and the standalone CLI both sit on this.
 * Never rejects; failures end the shard "errored" with a reason a person can act on.
 */
export async function runShard(plan: Plan, opts: RunShardOptions): Promise<ShardOutcome> {
  const withDriver = { ...opts, driver: opts.driver ?? (await loadDriver(plan.target.protocol)) };
  return plan.scenario.kind === "users" ? new UsersEngine(plan, withDriver).run() : new ShardEngine(plan, withDriver).run();
}
