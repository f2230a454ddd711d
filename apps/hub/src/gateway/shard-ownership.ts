import { listShards, type Db } from "@volley/db";
import { describeAgent, type AgentSession } from "./agent-registry";

/**
 * Whether an agent may report on a shard (frames): null if it may, else the refusal for its ack.
 *
 * The session's lease on this replica decides when there is one. Without one (this hub restarted,
 * or the agent reconnected to another replica, or its lease ended while frames were still in its
 * spool) the shard row's assigned agent decides: those frames are the agent's own measurements,
 * and refusing them would lose them; anyone else's report on the shard is refused.
 */
export async function shardOwnershipError(db: Db, session: Pick<AgentSession, "agentId" | "name" | "lease">, runId: string, shardId: string): Promise<string | null> {
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
