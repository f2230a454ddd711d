import type { AgentCapacity, AgentCount } from "@volley/contracts";

/** An agent of the run's pool that was idle when the run started. */
export interface IdleAgent {
  id: string;
  capacity: Pick<AgentCapacity, "maxConnections" | "cores">;
  connectedAt?: Date | null;
}

/** One planned shard: the agent it is sized for (null: whichever agent frees up) and its weight. */
export interface PlannedSlot {
  agentId: string | null;
  weight: number;
}

export type AgentSelection = { ok: true; slots: PlannedSlot[] } | { ok: false; reason: string };

/**
 * An agent's share of a run. maxConnections, because connections are what a shard is made of
 * (each holds a socket, buffers and timers on the agent) and every rate is split in proportion to
 * them; it is also the one figure the agent reports about its own limit, where cores and memory
 * say nothing of how heavy a plan's messages are. Cores only break ties, in the ordering below.
 */
const weightOf = (a: IdleAgent) => a.capacity.maxConnections;

/**
 * Chooses the agents of a run from the pool's idle agents: for a number N, the N with the largest
 * capacity, and when fewer are idle the remaining slots get their average weight and no agent
 * (those shards wait in the queue for whichever agent frees up first, as before); for "all", every
 * idle agent, and none is an error. Largest first, so a plan with fewer connections than agents
 * (the planner keeps the first slots) drops the smallest. Deterministic: ties go by cores, then to
 * the agent connected longest (first come, as the dispatcher handed shards out before), then by id.
 */
export function selectAgents(count: AgentCount, pool: string, idle: readonly IdleAgent[], connections?: number): AgentSelection {
  const since = (a: IdleAgent) => a.connectedAt?.getTime() ?? Number.POSITIVE_INFINITY;
  const ranked = [...idle].sort(
    (a, b) => weightOf(b) - weightOf(a) || b.capacity.cores - a.capacity.cores || since(a) - since(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  if (count === "all") {
    if (ranked.length === 0)
      return { ok: false, reason: `agents.count is "all" but pool '${pool}' has no idle agent; start an agent in that pool or set agents.count to a number` };
    return fits(ranked, ranked.length, count, pool, connections) ?? { ok: true, slots: ranked.map((a) => ({ agentId: a.id, weight: weightOf(a) })) };
  }
  const chosen = ranked.slice(0, count).map((a) => ({ agentId: a.id as string | null, weight: weightOf(a) }));
  // Shards beyond the idle agents go to whichever agent frees up, whose capacity is not known yet.
  if (chosen.length === count) {
    const refused = fits(ranked.slice(0, count), ranked.length, count, pool, connections);
    if (refused) return refused;
  }
  const average = chosen.length > 0 ? chosen.reduce((s, c) => s + c.weight, 0) / chosen.length : 1;
  while (chosen.length < count) chosen.push({ agentId: null, weight: average });
  return { ok: true, slots: chosen };
}

/**
 * Refuses a plan whose peak connections exceed what the chosen agents hold together. Shards are
 * split in proportion to maxConnections, so when the total fits every shard fits its agent; when
 * it does not, each agent would refuse its shard only after the run was dispatched.
 */
function fits(
  chosen: readonly IdleAgent[],
  idle: number,
  count: AgentCount,
  pool: string,
  connections: number | undefined,
): { ok: false; reason: string } | undefined {
  if (connections === undefined) return undefined;
  const total = chosen.reduce((s, a) => s + weightOf(a), 0);
  if (connections <= total) return undefined;
  const each = chosen.map((a) => `${a.id} ${weightOf(a).toLocaleString("en-US")}`).join(", ");
  const more =
    idle > chosen.length
      ? `raise agents.count (pool '${pool}' has ${idle} idle agents)`
      : `start more agents in pool '${pool}'${count === "all" ? "" : " and raise agents.count"}`;
  return {
    ok: false,
    reason:
      `connections.count is ${connections.toLocaleString("en-US")} but the ${chosen.length} idle agent${chosen.length === 1 ? "" : "s"} chosen from pool '${pool}' ${chosen.length === 1 ? "holds" : "hold"} at most ` +
      `${total.toLocaleString("en-US")} (${each}); lower connections.count to ${total.toLocaleString("en-US")} or less, or ${more}`,
  };
}
