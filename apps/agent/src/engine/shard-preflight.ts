import { sweepPlanError, userConnections, type Plan } from "@volley/contracts";
import { speaks } from "../drivers/driver-for";

const ENGINE_SCENARIOS: readonly string[] = ["echo", "broadcast", "groups", "storm", "http-rps", "users"];

export interface AgentLimits {
  maxConnections: number;
}

/** Why this agent cannot run the plan, or undefined when it can. Checked before a shard is armed. */
export function shardPreflight(plan: Plan, limits: AgentLimits): string | undefined {
  if (!speaks(plan.target.protocol)) return `protocol "${plan.target.protocol}" is not supported by this agent`;
  // A user's connection of its own protocol needs that driver too.
  for (const c of userConnections(plan).values())
    if (!speaks(c.protocol)) return `protocol "${c.protocol}" (flow.steps.${c.position}: connection ${c.name}) is not supported by this agent`;
  // The plan schema runs ahead of the engine: refuse what this engine cannot run rather than run it as something else.
  if (!ENGINE_SCENARIOS.includes(plan.scenario.kind)) {
    return `scenario "${plan.scenario.kind}" is not supported by this agent version (it runs: ${ENGINE_SCENARIOS.join(", ")})`;
  }
  // A connection scenario's open-loop phase sends the flow's messages: with a flow and none, there is nothing to send.
  const { flow } = plan;
  if (flow && !flow.steps && !flow.messages && plan.scenario.kind !== "users")
    return `flow.messages: a ${plan.scenario.kind} scenario sends after each connection's setup, and this flow has no messages: add what each connection sends, like messages: [{ json: { type: ping, id: "{{ msg.id }}" }, reply: { match: { path: $.id, equals: "{{ msg.id }}" } } }] (reply: false to fire and forget)`;
  // The plan schema's own check (a plan from an older hub may not have passed it), word for word.
  const sweep = sweepPlanError(plan);
  if (sweep) return `${sweep.path.join(".")} ${sweep.message}`;
  if (plan.connections.count > limits.maxConnections) {
    return `plan asks for ${plan.connections.count} connections; this agent allows at most ${limits.maxConnections} (AGENT_MAX_CONNECTIONS)`;
  }
  return undefined;
}
