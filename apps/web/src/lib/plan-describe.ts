import { durationMs, type Plan } from "@volley/contracts";
import { fmtDuration, fmtInt } from "./format";

/**
 * How a plan opens its connections, in words: "300 connections opened at 100/s", or for stages the
 * line they follow, "stages 20 s → 300, 30 s → 1,000, 10 s → 0 (peak 1,000)". A staged plan's
 * `count` and `rate` are not what it does, so they are never shown for one.
 */
export function describeConnections(plan: Pick<Plan, "connections">): string {
  const { count, rate, stages } = plan.connections;
  if (stages && stages.length > 0) {
    const peak = Math.max(...stages.map((s) => s.target));
    const line = stages.map((s) => `${fmtDuration(durationMs(s.duration))} → ${fmtInt(s.target)}`).join(", ");
    return `stage${stages.length === 1 ? "" : "s"} ${line} (peak ${fmtInt(peak)} connection${peak === 1 ? "" : "s"})`;
  }
  return `${fmtInt(count)} connection${count === 1 ? "" : "s"} opened at ${fmtInt(rate)}/s`;
}
