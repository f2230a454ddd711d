import type { Plan, PlanRecord, PlanVersion } from "@volley/contracts";
import { deletePlan, getPlan, insertPlan, listPlans, listPlanVersions, updatePlan, type PlanRow } from "@volley/db";
import type { AuthContext } from "./auth";
import { notFound } from "./errors";
import { getDb } from "./services";

/** Saved plans of an org; every save is a new version (plan_versions), read back by GET /plans/{id}/versions. */

export function toPlanRecord(row: PlanRow): PlanRecord {
  return { id: row.id, name: row.name, version: row.version, plan: row.document, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
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
  return (await listPlans(getDb(), orgId, page)).map(toPlanRecord);
}

export async function savePlanVersion(auth: AuthContext, id: string, plan: Plan): Promise<PlanRecord> {
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
