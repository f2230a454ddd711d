import { preflightPlan, type Plan, type Preflight, type PreflightWarning } from "@volley/contracts";
import { listAgentStatuses } from "@volley/db";
import { ApiError } from "../http/errors";
import { getDb } from "../http/services";

/** The plan held against the agents connected to its pool in the org (packages/contracts agent-load.ts). */
export async function preflight(plan: Plan, orgId: string): Promise<Preflight> {
  const agents = (await listAgentStatuses(getDb(), orgId)).filter((a) => a.pool === plan.agents.pool && a.status !== "offline");
  return preflightPlan(plan, agents);
}

/** For POST /runs: 409 when the pool lacks the agents the plan asks for, else the warnings. */
export async function admitToPool(plan: Plan, orgId: string): Promise<PreflightWarning[]> {
  const checked = await preflight(plan, orgId);
  if (!checked.ok) throw new ApiError(409, checked.code, checked.message);
  return checked.warnings;
}

/** For POST /plans/validate: everything as warnings (the plan is valid; the pool may change before it runs). */
export async function preflightWarnings(plan: Plan, orgId: string): Promise<PreflightWarning[]> {
  const checked = await preflight(plan, orgId);
  return checked.ok ? checked.warnings : [{ code: checked.code, message: checked.message }];
}
