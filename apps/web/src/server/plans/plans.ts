import { LIST_PAGE_MAX_BYTES, parsePlanDocument, type Plan, type PlanRecord, type PlanVersion, type SavePlanBody } from "@volley/contracts";
import { deletePlan, getPlan, getPlanSchedule, insertPlan, listPlanPage, listPlanVersions, updatePlan, type PlanRow } from "@volley/db";
import { admitRun } from "../targets/targets";
import type { AuthContext } from "../auth/auth";
import { invalidBody } from "../http/api-handler";
import { notFound, unknownCursor } from "../http/errors";
import { getDb } from "../http/services";

/** Saved plans of an org; every save is a new version (plan_versions), read back by GET /plans/{id}/versions. */

export function toPlanRecord(row: PlanRow): PlanRecord {
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    plan: row.document,
    yaml: row.source,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    tags: row.tags,
    notes: row.notes,
    baselineRunId: row.baselineRunId,
  };
}

const actorId = (auth: AuthContext) => (auth.actor.kind === "user" ? auth.actor.userId : auth.actor.kind === "token" ? auth.actor.tokenId : null);

/**
 * The plan a save carries and the text to keep: YAML is validated here (a 400 naming the field inside
 * it, as yaml.<path>) and kept exactly as sent; a JSON plan keeps no text.
 */
function contentOf(body: SavePlanBody): { document: Plan; source: string | null } {
  if (body.yaml === undefined) return { document: body.plan!, source: null };
  const parsed = parsePlanDocument(body.yaml);
  if (!parsed.ok) throw invalidBody(parsed.issues.map((i) => ({ ...i, path: i.path === "(document)" ? "yaml" : `yaml.${i.path}` })));
  return { document: parsed.plan, source: body.yaml };
}

export async function createPlan(auth: AuthContext, body: SavePlanBody): Promise<PlanRecord> {
  return toPlanRecord(await insertPlan(getDb(), { orgId: auth.orgId, ...contentOf(body), createdBy: actorId(auth) }));
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

export async function savePlanVersion(auth: AuthContext, id: string, body: SavePlanBody): Promise<PlanRecord> {
  const content = contentOf(body);
  // A scheduled plan runs its latest version with nobody starting it: the version is admitted now, as a run would be.
  const schedule = await getPlanSchedule(getDb(), auth.orgId, id);
  if (schedule?.enabled) await admitRun(auth, content.document);
  const row = await updatePlan(getDb(), { id, orgId: auth.orgId, ...content, createdBy: actorId(auth) });
  if (!row) throw notFound(`plan ${id}`);
  return toPlanRecord(row);
}

export async function removePlan(orgId: string, id: string): Promise<void> {
  if (!(await deletePlan(getDb(), id, orgId))) throw notFound(`plan ${id}`);
}

export async function loadPlanVersions(orgId: string, id: string): Promise<PlanVersion[]> {
  const rows = await listPlanVersions(getDb(), id, orgId);
  if (!rows) throw notFound(`plan ${id}`);
  return rows.map((r) => ({ version: r.version, name: r.name, plan: r.document, yaml: r.source, createdAt: r.createdAt.toISOString() }));
}
