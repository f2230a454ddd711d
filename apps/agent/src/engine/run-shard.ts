import type { Plan } from "@volley/contracts";
import { UsersEngine } from "../users/users-engine";
import { ShardEngine } from "./shard-engine";
import type { RunShardOptions, ShardOutcome } from "./types";

/**
 * Runs one shard's plan (already this agent's slice) and resolves when it has ended, after its last
 * frame went to onFrame. Needs no hub: the hub client and the standalone CLI both sit on this.
 * Never rejects; failures end the shard "errored" with a reason a person can act on.
 */
export function runShard(plan: Plan, opts: RunShardOptions): Promise<ShardOutcome> {
  return plan.scenario.kind === "users" ? new UsersEngine(plan, opts).run() : new ShardEngine(plan, opts).run();
}
