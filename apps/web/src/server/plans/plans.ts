import { LIST_PAGE_MAX_BYTES, type Plan, type PlanRecord, type PlanVersion } from "@volley/contracts";
import { deletePlan, getPlan, getPlanSchedule, insertPlan, listPlanPage, listPlanVersions, updatePlan, type PlanRow } from "@volley/db";
import { admitRun } from "../targets/targets";
import type { AuthContext } from "../auth/auth";
import { notFound, unknownCursor } from "../http/errors";
import { getDb } from "../http/services";

/** Saved plans of an org; every save is a new version (plan_versions), read back by GET /plans/{id}/versions. */

export function toPlanRecord(row: PlanRow): PlanRecord {
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    plan: row.document,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    tags: row.tags,
    notes: row.notes,
    baselineRunId: row.baselineRunId,
  };
}

const actorId = (auth: AuthContext) => (auth.actor.kind === "user" ? auth.actor.userId : auth.actor.kind === "token" ? auth.actor.tokenId : null);

export async function createPlan(auth: AuthContext, plan: Plan): Promise<PlanRecord> {
  return toPlanRecord(await insertPlan(getDb(), { orgId: auth.orgId, document: plan, createdBy: actorId(auth) }));
}

export async function loadPlan(orgId: string, id: string): Promise<PlanRecord> {
  const row = await getPlan(getDb(), id, orgId);
  if (!row) throw notFound(`plan ${id}`);
  return toPlanRecord(row);
}

export async function loadPlanList(orgId: string, page: { limit: number; offset: number }): Promise<PlanRecord[]> {
  return (await loadPlanPage(orgId, page)).plans;
}

/**
 * One page of GET /api/v1/plans, most recently changed first: at most `limit` plans and at most
 * LIST_PAGE_MAX_BYTES of plan documents (one large plan per page at worst). `next` is the cursor of
 * the following page, null on the last.
 */
export async function loadPlanPage(
  orgId: string,
  q: { limit: number; offset: number; cursor?: string },
): Promise<{ plans: PlanRecord[]; next: string | null }> {
  const page = await listPlanPage(getDb(), orgId, { limit: q.limit, offset: q.offset, after: q.cursor, maxBytes: LIST_PAGE_MAX_BYTES });
  if (!page) throw unknownCursor("plan", q.cursor!);
  return { plans: page.rows.map(toPlanRecord), next: page.more && page.rows.length > 0 ? page.rows.at(-1)!.id : null };
}

export async function savePlanVersion(auth: AuthContext, id: string, plan: Plan): Promise<PlanRecord> {
  // A scheduled plan runs its latest version with nobody starting it: the version is admitted now, as a run would be.
  const schedule = await getPlanSchedule(getDb(), auth.orgId, id);
  if (schedule?.enabled) await admitRun(auth, plan);
  const row = await updatePlan(getDb(), { id, orgId: auth.orgId, document: plan, createdBy: actorId(auth) });
  if (!row) throw notFound(`plan ${id}`);
  return toPlanRecord(row);
}

export async function removePlan(orgId: string, id: string): Promise<void> {
  if (!(await deletePlan(getDb(), id, orgId))) throw notFound(`plan ${id}`);
}

export async function loadPlanVersions(orgId: string, id: string): Promise<PlanVersion[]> {
  const rows = await listPlanVersions(getDb(), id, orgId);
  if (!rows) throw notFound(`plan ${id}`);
  return rows.map((r) => ({ version: r.version, name: r.name, plan: r.document, createdAt: r.createdAt.toISOString() }));
}
