import type { MetaPatchBody, PlanRecord, RunWithMeta } from "@volley/contracts";
import { FINAL_RUN_STATUSES } from "@volley/contracts";
import { getPlan, getRun, setPlanBaseline, setPlanMeta, setRunMeta } from "@volley/db";
import { ApiError, notFound } from "../http/errors";
import { getDb } from "../http/services";
import { loadPlan } from "../plans/plans";
import { loadRun } from "./runs";

/** Tags and notes on runs and plans, and which run is a plan's baseline. */

export async function updateRunMeta(orgId: string, runId: string, patch: MetaPatchBody): Promise<RunWithMeta> {
  if (!(await setRunMeta(getDb(), orgId, runId, patch))) throw notFound(`run ${runId}`);
  return loadRun(runId, orgId);
}

export async function updatePlanMeta(orgId: string, planId: string, patch: MetaPatchBody): Promise<PlanRecord> {
  if (!(await setPlanMeta(getDb(), orgId, planId, patch))) throw notFound(`plan ${planId}`);
  return loadPlan(orgId, planId, true); // PATCH is for those who may change the plan: they see its credentials
}

/**
 * Makes a finished run of the plan, with a summary, its baseline. A run of another plan (or an
 * inline plan) would compare unlike with unlike, a run still going has no numbers yet, and an
 * inconclusive one's numbers judged nothing (its capacity search measured the load generator).
 */
export async function markBaseline(orgId: string, planId: string, runId: string): Promise<{ planId: string; baselineRunId: string | null }> {
  const db = getDb();
  const [plan, run] = await Promise.all([getPlan(db, planId, orgId), getRun(db, runId, orgId)]);
  if (!plan) throw notFound(`plan ${planId}`);
  if (!run)
    throw new ApiError(400, "invalid_body", `runId: run ${runId} does not exist in this organization`, [
      { path: "runId", message: `run ${runId} does not exist` },
    ]);
  if (run.planId !== planId) {
    throw new ApiError(
      400,
      "invalid_body",
      `runId: run ${runId} is not a run of plan ${planId}${run.planId ? ` (it ran plan ${run.planId})` : " (it ran an inline plan)"}; a baseline must be a run of the plan`,
      [{ path: "runId", message: "not a run of this plan" }],
    );
  }
  if (!FINAL_RUN_STATUSES.includes(run.status) || !run.summary) {
    throw new ApiError(
      409,
      "conflict",
      `run ${runId} is ${run.status}${run.summary ? "" : " without a summary"}; only a finished run with measurements can be a baseline`,
    );
  }
  if (run.status === "inconclusive") {
    throw new ApiError(
      409,
      "conflict",
      `run ${runId} is inconclusive (${run.reason ?? "nothing in it could be judged"}); a baseline must be a run whose measurements were judged: pick a passed or failed run of the plan`,
    );
  }
  await setPlanBaseline(db, orgId, planId, runId);
  return { planId, baselineRunId: runId };
}

export async function clearBaseline(orgId: string, planId: string): Promise<void> {
  if (!(await setPlanBaseline(getDb(), orgId, planId, null))) throw notFound(`plan ${planId}`);
}
