import type { Plan } from "@volley/contracts";
import { driverFor } from "../drivers/driver-for";

export interface AgentLimits {
  maxConnections: number;
}

/** Why this agent cannot run the plan, or undefined when it can. Checked before a shard is armed. */
export function shardPreflight(plan: Plan, limits: AgentLimits): string | undefined {
  if (!driverFor(plan.target.protocol)) return `protocol "${plan.target.protocol}" is not supported by this agent`;
  if (plan.connections.count > limits.maxConnections) {
    return `plan asks for ${plan.connections.count} connections; this agent allows at most ${limits.maxConnections} (AGENT_MAX_CONNECTIONS)`;
  }
  return undefined;
}
