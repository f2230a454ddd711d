import type { z } from "zod";
import { durationMs } from "./duration";
import { sweepBaseRate, sweepRates, type Sweep } from "./scenario";

interface SweepPlan {
  connections: { stages?: unknown };
  scenario: { kind: string; duration: string | number; message: { rate: number }; arrivalRate?: number };
  sweep?: Sweep;
}

/**
 * Why a plan's sweep cannot run (null: it can), as the field and what is wrong with it: the same
 * answer for the plan schema and for the agent's preflight (which checks plans from older hubs too), so a plan that validates is never
 * refused by the run the moment it starts.
 */
export function sweepPlanError(plan: SweepPlan): { path: string[]; message: string } | null {
  const sweep = plan.sweep;
  if (!sweep) return null;
  if (plan.connections.stages)
    return {
      path: ["sweep"],
      message: "cannot be combined with connections.stages: a sweep steps the rate over a fixed population; remove one of them",
    };
  const duration = durationMs(plan.scenario.duration);
  const stepMs = durationMs(sweep.warmup ?? 0) + durationMs(sweep.hold);
  if (duration < stepMs) {
    const warmup = sweep.warmup ? ` + sweep.warmup ${durationMs(sweep.warmup)} ms` : "";
    return {
      path: ["scenario", "duration"],
      message: `is ${duration} ms, shorter than one sweep step (sweep.hold ${durationMs(sweep.hold)} ms${warmup}), so no step fits; set duration to at least ${stepMs / 1000}s or shorten the step`,
    };
  }
  const users = plan.scenario.kind === "users";
  if (sweep.stopWhen?.usersFailedRate !== undefined && !users)
    return {
      path: ["sweep", "stopWhen", "usersFailedRate"],
      message: "judges users (scenario.kind: users): use lossRate or errorRate for a connection scenario's messages",
    };
  const base = sweepBaseRate(plan.scenario);
  if (sweepRates(sweep, base).length === 0)
    return {
      path: ["sweep", "until"],
      message: `is ${sweep.until}, below the first step's rate (${sweep.from ?? base}, ${sweep.from === undefined ? (users ? "scenario.arrivalRate" : "scenario.message.rate") : "sweep.from"}), so no step runs; raise until or set sweep.from below it`,
    };
  return null;
}

/** The plan schema's check of the sweep (see sweepPlanError). */
export function validateSweep(plan: SweepPlan, ctx: z.RefinementCtx): void {
  const error = sweepPlanError(plan);
  if (error) ctx.addIssue({ code: "custom", path: error.path, message: error.message });
}
