import { getRunOfAnyOrg, listShards, type Db } from "@volley/db";
import { describeAgent, type AgentSession } from "./agent-registry";

/**
 * Whether an agent may report on a shard (frames): null if it may, else the refusal for its ack.
 *
 * The session's lease on this replica decides when there is one. Without one (this hub restarted,
 * or the agent reconnected to another replica, or its lease ended while frames were still in its
 * spool) the shard row's assigned agent decides: those frames are the agent's own measurements,
 * and refusing them would lose them; anyone else's report on the shard is refused.
 */
export async function shardOwnershipError(
  db: Db,
  session: Pick<AgentSession, "agentId" | "name" | "lease">,
  runId: string,
  shardId: string,
): Promise<string | null> {
  const who = describeAgent(session);
  const lease = session.lease;
  if (lease) {
    if (lease.runId === runId && lease.shardId === shardId) return null;
    return `shard ${shardId} of run ${runId} is not leased to ${who}: it holds shard ${lease.shardId} of run ${lease.runId}; send frames only for the shard the hub assigned`;
  }
  const row = (await listShards(db, runId)).find((s) => s.id === shardId);
  if (row && row.agentId === session.agentId) return null;
  const why = !row ? "no such shard in that run" : row.agentId ? "it is assigned to another agent" : "it is not assigned to any agent";
  return `shard ${shardId} of run ${runId} is not leased to ${who} (${why}); send frames only for the shard the hub assigned`;
}

/** Why an agent's hello may not carry the shard it names; `audit` is the precise cause, `reason` what the agent is told. */
export interface HeldShardRefusal {
  reason: string;
  audit: string;
  /** The org whose run was named (null when no such run): its audit log records the attempt. */
  runOrgId: string | null;
}

/**
 * Whether an agent connecting with a shard in its hello may keep it (null) or not. Only the agent
 * the shard was assigned to (its agents row, in the run's org) may resume it; anyone else naming a
 * running shard would otherwise be leased it on connect and could report measurements into another
 * agent's — or another org's — run. Checked before the agent is registered, so no lease exists yet.
 */
export async function heldShardRefusal(
  db: Db,
  agent: { agentId: string; orgId: string },
  held: { runId: string; shardId: string },
): Promise<HeldShardRefusal | null> {
  const run = await getRunOfAnyOrg(db, held.runId);
  const row = run ? (await listShards(db, held.runId)).find((s) => s.id === held.shardId) : undefined;
  // Another org's run reads as missing to the agent: it learns nothing about runs it cannot see.
  const refuse = (audit: string, reason = audit): HeldShardRefusal => ({
    reason: `shard not resumed by the restarted hub: ${reason}`,
    audit,
    runOrgId: run?.orgId ?? null,
  });
  if (!run || !row) return refuse("no such shard");
  if (run.orgId !== agent.orgId) return refuse(`the shard belongs to a run of organization ${run.orgId}, not the agent's ${agent.orgId}`, "no such shard");
  if (row.agentId !== agent.agentId) return refuse(row.agentId ? "the shard is assigned to another agent" : "the shard is not assigned to any agent");
  return null;
}
