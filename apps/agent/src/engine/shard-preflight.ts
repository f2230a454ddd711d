import { durationMs, type Plan } from "@volley/contracts";
import { driverFor } from "../drivers/driver-for";

const ENGINE_SCENARIOS: readonly string[] = ["echo", "broadcast", "groups", "storm", "http-rps", "users"];

export interface AgentLimits {
  maxConnections: number;
}

/** Why this agent cannot run the plan, or undefined when it can. Checked before a shard is armed. */
export function shardPreflight(plan: Plan, limits: AgentLimits): string | undefined {
  if (!driverFor(plan.target.protocol)) return `protocol "${plan.target.protocol}" is not supported by this agent`;
  // The plan schema runs ahead of the engine: refuse what this engine cannot run rather than run it as something else.
  if (!ENGINE_SCENARIOS.includes(plan.scenario.kind)) {
    return `scenario "${plan.scenario.kind}" is not supported by this agent version (it runs: ${ENGINE_SCENARIOS.join(", ")})`;
  }
  if (plan.connections.stages && plan.sweep) {
    return "connections.stages and sweep cannot be combined: a sweep steps the rate over a fixed population; remove one of them";
  }
  if (plan.sweep && durationMs(plan.scenario.duration) < durationMs(plan.sweep.hold)) {
    return `scenario.duration (${durationMs(plan.scenario.duration)} ms) is shorter than sweep.hold (${durationMs(plan.sweep.hold)} ms), so no step fits; set duration to at least hold`;
  }
  if (plan.connections.count > limits.maxConnections) {
    return `plan asks for ${plan.connections.count} connections; this agent allows at most ${limits.maxConnections} (AGENT_MAX_CONNECTIONS)`;
  }
  return undefined;
}
