import { secs } from "./artillery-steps";
import type { PlanInput } from "@volley/contracts";
import type { Phase } from "./artillery-schema";
import { DEFAULT_SCHEDULE } from "./schedule-options";

/**
 * config.phases as Volley connections. Artillery starts virtual users at an arrival rate; each
 * user is one connection here, so a phase of `arrivalRate` r for d seconds opens r × d connections
 * at r per second. Several phases, ramps (rampTo) and pauses become stages whose targets are the
 * arrivals so far (linear where Artillery's ramp is quadratic: noted), then a hold for the flow.
 */
export function phasesToConnections(phases: Phase[] | undefined, flowSeconds: number, notes: string[]): PlanInput["connections"] {
  if (!phases || phases.length === 0) {
    notes.push(`config.phases is missing: ${DEFAULT_SCHEDULE.connections} connections by default`);
    return { count: DEFAULT_SCHEDULE.connections, rate: DEFAULT_SCHEDULE.connections };
  }
  const arrivals = (p: Phase): number => {
    if (p.pause !== undefined) return 0;
    const d = p.duration ?? 0;
    if (p.arrivalCount !== undefined) return p.arrivalCount;
    if (p.rampTo !== undefined) return (((p.arrivalRate ?? 0) + p.rampTo) / 2) * d;
    return (p.arrivalRate ?? 0) * d;
  };
  const cap = (n: number, p: Phase) => (p.maxVusers !== undefined ? Math.min(n, p.maxVusers) : n);
  for (const p of phases)
    if (p.maxVusers !== undefined) notes.push(`phase ${p.name ?? ""} maxVusers ${p.maxVusers}: the connection count is capped at it`.replace("  ", " "));

  if (phases.length === 1 && phases[0]!.rampTo === undefined && phases[0]!.pause === undefined) {
    const p = phases[0]!;
    const count = Math.max(1, Math.round(cap(arrivals(p), p)));
    const rate = p.arrivalCount !== undefined ? p.arrivalCount / Math.max(1, p.duration ?? 1) : (p.arrivalRate ?? count);
    return { count, rate: Math.min(100_000, Math.max(0.001, rate)) };
  }

  const stages: { duration: string; target: number }[] = [];
  let open = 0;
  let highest = 0;
  for (const p of phases) {
    const d = p.pause ?? p.duration ?? 0;
    if (d <= 0) continue;
    open = Math.round(cap(open + arrivals(p), p));
    highest = Math.max(highest, open);
    stages.push({ duration: secs(d), target: open });
  }
  stages.push({ duration: secs(Math.max(1, flowSeconds)), target: open });
  if (phases.some((p) => p.rampTo !== undefined))
    notes.push(
      "a rampTo phase became a stage whose connections grow linearly to the phase's arrivals (Artillery's arrival rate ramps, so its users grow faster at the end): approximated",
    );
  if (phases.some((p) => p.pause !== undefined)) notes.push("a pause phase became a stage that holds the connections open");
  notes.push(
    `the phases became connections.stages (the connections open at the end of each phase), with a last stage of ${secs(Math.max(1, flowSeconds))} so the last users finish their flow`,
  );
  return { count: Math.max(1, highest), stages };
}
