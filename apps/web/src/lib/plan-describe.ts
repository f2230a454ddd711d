import { durationMs, type Plan } from "@volley/contracts";
import { fmtDuration, fmtInt, fmtMsgRate, fmtRateValue } from "./format";

/**
 * How a plan opens its connections, in words: "300 connections opened at 100/s", or for stages the
 * line they follow, "stages 20 s → 300, 30 s → 1,000, 10 s → 0 (peak 1,000)". A staged plan's
 * `count` and `rate` are not what it does, so they are never shown for one.
 */
export function describeConnections(plan: Pick<Plan, "connections" | "scenario">): string {
  const { count, rate, stages } = plan.connections;
  if (plan.scenario.kind === "users") return `at most ${fmtInt(count)} user${count === 1 ? "" : "s"} at once`;
  if (stages && stages.length > 0) {
    const peak = Math.max(...stages.map((s) => s.target));
    const line = stages.map((s) => `${fmtDuration(durationMs(s.duration))} → ${fmtInt(s.target)}`).join(", ");
    return `stage${stages.length === 1 ? "" : "s"} ${line} (peak ${fmtInt(peak)} connection${peak === 1 ? "" : "s"})`;
  }
  return `${fmtInt(count)} connection${count === 1 ? "" : "s"} opened at ${fmtInt(rate)}/s`;
}

/**
 * What the plan's scenario does, in words: "echo, 20/s per connection for 30 s", or for users
 * "users: 10 arriving/s for 30 s, each running 6 steps".
 */
export function describeScenario(plan: Pick<Plan, "scenario" | "flow">): string {
  const s = plan.scenario;
  const length = fmtDuration(durationMs(s.duration));
  if (s.kind === "users") {
    const steps = plan.flow?.steps?.length ?? 0;
    const ramp = s.stages ? `, ramping to ${fmtRateValue(s.stages.at(-1)!.target)}/s` : "";
    return `users: ${fmtRateValue(s.arrivalRate)} arriving/s${ramp}${s.arrival === "poisson" ? " (Poisson)" : ""} for ${length}, each running ${steps} step${steps === 1 ? "" : "s"}`;
  }
  return `${s.kind}, ${fmtMsgRate(s.message.rate)} ${s.message.per === "connection" ? "per connection" : "total"} for ${length}`;
}
