import { z } from "zod";
import type { AgentCapacity } from "./agent-protocol";
import type { Plan } from "./plan";
import { sweepRates } from "./scenario";

/** How a run's load is split across agents, and an agent's shard across its engine threads. */
export { planShards, splitProportionally } from "./shard-split";

/**
 * What one agent core can do, in messages per second (sent plus received), and the preflight that
 * holds a plan against the agents of its pool before it runs. The one place this estimate lives.
 *
 * Where the number comes from: bench/RESULTS.md, "ws echo CPU per 100k" (ws-echo-cpu.ts, quiet
 * machine): the agent spends 2.02 CPU-s per 100,000 round trips, about 20 µs per round trip, i.e.
 * 10 µs per message sent or received: ~99,000 messages/s per core with the core at 100 %. Send lag
 * and latency come from the agent itself well before that, so the estimate is half of it.
 * Socket.IO costs 4.38 CPU-s per 100k in the same bench (2.2× ws); other protocols are not
 * measured and are counted like ws.
 */
export const MESSAGES_PER_CORE_PER_SECOND = 50_000;
const PROTOCOL_COST: Partial<Record<Plan["target"]["protocol"], number>> = { socketio: 2.2 };

export interface PreflightAgent {
  capacity: Pick<AgentCapacity, "cores" | "maxConnections">;
}

/** One preflight finding in API responses (POST /runs, POST /plans/validate): `warnings: [{code, message}]`. */
export const preflightWarningSchema = z.object({
  code: z.enum(["agents_saturated", "agent_connections", "not_enough_agents"]),
  message: z.string(),
});
export type PreflightWarning = z.infer<typeof preflightWarningSchema>;

export type Preflight = { ok: true; warnings: PreflightWarning[] } | { ok: false; code: "not_enough_agents"; message: string };

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const plural = (n: number, one: string, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;

/** Messages per second the plan sends at its peak (a sweep's highest step), all agents together. */
export function peakSendRate(plan: Plan): number {
  const m = plan.scenario.message;
  const rate = plan.sweep ? Math.max(m.rate, ...sweepRates(plan.sweep, m.rate)) : m.rate;
  return m.per === "connection" ? rate * plan.connections.count : rate;
}

/** Messages per second the agents receive for that: a reply per message, or one delivery per receiving member. */
export function peakReceiveRate(plan: Plan): number {
  const sent = peakSendRate(plan);
  const s = plan.scenario;
  if (s.kind === "broadcast") return sent * (plan.connections.count - 1) + (s.echo ? sent : 0);
  if (s.kind === "groups") return sent * (Math.min(s.size, plan.connections.count) - 1);
  return sent;
}

/**
 * Holds a plan against the connected agents of its pool: refuses a plan that asks for more agents
 * than are connected (it could only wait), and warns when the agents it would get (the largest, as
 * the hub picks them) are likely saturated by its message rate or cannot hold its connections.
 */
export function preflightPlan(plan: Plan, connected: readonly PreflightAgent[]): Preflight {
  const pool = plan.agents.pool;
  const asked = plan.agents.count;
  if (asked === "all" ? connected.length === 0 : connected.length < asked) {
    const wants = asked === "all" ? "every agent of its pool (agents.count: all)" : plural(asked, "agent");
    const fix =
      connected.length === 0
        ? `start an agent in pool '${pool}' (see the Agents page)`
        : `start ${plural((asked as number) - connected.length, "more agent")} in pool '${pool}', or lower agents.count to ${connected.length}`;
    return { ok: false, code: "not_enough_agents", message: `plan asks for ${wants}; pool '${pool}' has ${connected.length} connected; ${fix}` };
  }
  const chosen = [...connected]
    .sort((a, b) => b.capacity.maxConnections - a.capacity.maxConnections || b.capacity.cores - a.capacity.cores)
    .slice(0, asked === "all" ? connected.length : asked);
  const warnings: PreflightWarning[] = [];
  const cores = chosen.reduce((n, a) => n + a.capacity.cores, 0);
  const cost = PROTOCOL_COST[plan.target.protocol] ?? 1;
  const sent = peakSendRate(plan);
  const received = peakReceiveRate(plan);
  const capacity = (cores * MESSAGES_PER_CORE_PER_SECOND) / cost;
  if (sent + received > capacity) {
    warnings.push({
      code: "agents_saturated",
      message:
        `at its peak the plan sends ${fmt(sent)} and receives ${fmt(received)} messages/s; the ${plural(chosen.length, "agent")} it gets from pool '${pool}' ` +
        `(${plural(cores, "core")}) handle about ${fmt(capacity)}/s (${fmt(MESSAGES_PER_CORE_PER_SECOND / cost)} per core for ${plan.target.protocol}), so the agents, not the server, ` +
        `may set the latency and send lag; raise agents.count, add agents with more cores, or lower the rate`,
    });
  }
  const holds = chosen.reduce((n, a) => n + a.capacity.maxConnections, 0);
  if (plan.connections.count > holds) {
    warnings.push({
      code: "agent_connections",
      message: `connections.count is ${fmt(plan.connections.count)} but the ${plural(chosen.length, "agent")} it gets from pool '${pool}' hold at most ${fmt(holds)}; the run will be refused by the hub unless more agents are free`,
    });
  }
  return { ok: true, warnings };
}
