import {
  getAtPath,
  keepRedactedSecrets,
  LIST_PAGE_MAX_BYTES,
  parsePlanDocument,
  replaceYamlScalars,
  SECRET_MARKER,
  type Plan,
  type PlanRecord,
  type PlanVersion,
  type SavePlanBody,
} from "@volley/contracts";
import {
  deletePlan,
  getPlan,
  getPlanSchedule,
  insertPlan,
  listPlanPage,
  listPlanVersions,
  openPlan,
  redactedPlan,
  updatePlan,
  type PlanRow,
  type PlanVersionRow,
} from "@volley/db";
import { secretsKeys } from "@/env";
import { admitRun } from "../targets/targets";
import { may, type AuthContext } from "../auth/auth";
import { invalidBody } from "../http/api-handler";
import { notFound, unknownCursor } from "../http/errors";
import { logOnce } from "../http/log";
import { getDb } from "../http/services";

/**
 * Saved plans of an org; every save is a new version (plan_versions), read back by GET /plans/{id}/versions.
 * A plan's target credentials (contracts planSecrets) are stored sealed (db plan-secrets-box) and
 * read back only by those who may change the plan (members and up, tokens with the run scope);
 * viewers and read tokens get them as SECRET_MARKER, in `plan` and in `yaml`.
 */

/** Whether this caller reads plans' target credentials (else they are redacted). */
export const seesPlanSecrets = (auth: AuthContext) => may(auth, "plans:write");

function keys() {
  const k = secretsKeys();
  if (!k)
    logOnce(
      "secrets-key-unset-plans",
      "VOLLEY_SECRETS_KEY is not set; target credentials in plans are stored unencrypted (out of the plan, but readable) — set it (openssl rand -base64 32) for web and hub",
    );
  return k;
}

/** A stored plan as this reader may see it: with its credentials (reveal) or with them redacted. */
function shown(row: PlanRow | PlanVersionRow, reveal: boolean): { plan: Plan; yaml: string | null } {
  if (!reveal) {
    const r = redactedPlan(row);
    return { plan: r.document, yaml: r.source };
  }
  const opened = openPlan(row, keys());
  return { plan: opened.plan, yaml: opened.source };
}

export function toPlanRecord(row: PlanRow, reveal = false): PlanRecord {
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    ...shown(row, reveal),
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
 * it, as yaml.<path>) and kept exactly as sent; a JSON plan keeps no text. A credential sent back as
 * SECRET_MARKER (the editor showed it redacted) keeps the value of `stored` (the plan as saved) at
 * that place; a marker with nothing stored behind it is a 400 naming the field.
 */
function contentOf(body: SavePlanBody, stored: Plan | null): { document: Plan; source: string | null; secretsKeys: ReturnType<typeof keys> } {
  let document: Plan;
  let source: string | null = null;
  if (body.yaml === undefined) document = body.plan!;
  else {
    const parsed = parsePlanDocument(body.yaml);
    if (!parsed.ok) throw invalidBody(parsed.issues.map((i) => ({ ...i, path: i.path === "(document)" ? "yaml" : `yaml.${i.path}` })));
    document = parsed.plan;
    source = body.yaml;
  }
  const { plan, kept, unresolved } = keepRedactedSecrets(document, stored);
  const at = body.yaml === undefined ? "plan" : "yaml";
  if (unresolved.length > 0)
    throw invalidBody(
      unresolved.map((path) => ({
        path: `${at}.${path}`,
        message: `still holds the redaction marker ${SECRET_MARKER}, and the saved plan has no value there to keep: type the value itself`,
      })),
    );
  // The text keeps the value too (as a quoted scalar); everything else in it stays as written.
  if (source !== null && kept.length > 0) source = replaceYamlScalars(source, kept, (_raw, path) => JSON.stringify(getAtPath(plan, path)));
  return { document: plan, source, secretsKeys: keys() };
}

export async function createPlan(auth: AuthContext, body: SavePlanBody): Promise<PlanRecord> {
  return toPlanRecord(await insertPlan(getDb(), { orgId: auth.orgId, ...contentOf(body, null), createdBy: actorId(auth) }), true);
}

/** The plan's latest version; `reveal`: with its target credentials (only for callers who may change it, see seesPlanSecrets). */
export async function loadPlan(orgId: string, id: string, reveal = false): Promise<PlanRecord> {
  const row = await getPlan(getDb(), id, orgId);
  if (!row) throw notFound(`plan ${id}`);
  return toPlanRecord(row, reveal);
}

export async function loadPlanList(orgId: string, page: { limit: number; offset: number }, reveal = false): Promise<PlanRecord[]> {
  return (await loadPlanPage(orgId, page, reveal)).plans;
}

/**
 * One page of GET /api/v1/plans, most recently changed first: at most `limit` plans and at most
 * LIST_PAGE_MAX_BYTES of plan documents (one large plan per page at worst). `next` is the cursor of
 * the following page, null on the last.
 */
export async function loadPlanPage(
  orgId: string,
  q: { limit: number; offset: number; cursor?: string },
  reveal = false,
): Promise<{ plans: PlanRecord[]; next: string | null }> {
  const page = await listPlanPage(getDb(), orgId, { limit: q.limit, offset: q.offset, after: q.cursor, maxBytes: LIST_PAGE_MAX_BYTES });
  if (!page) throw unknownCursor("plan", q.cursor!);
  return { plans: page.rows.map((r) => toPlanRecord(r, reveal)), next: page.more && page.rows.length > 0 ? page.rows.at(-1)!.id : null };
}

export async function savePlanVersion(auth: AuthContext, id: string, body: SavePlanBody): Promise<PlanRecord> {
  const current = await getPlan(getDb(), id, auth.orgId);
  if (!current) throw notFound(`plan ${id}`);
  const content = contentOf(body, openPlan(current, keys()).plan);
  // A scheduled plan runs its latest version with nobody starting it: the version is admitted now, as a run would be.
  const schedule = await getPlanSchedule(getDb(), auth.orgId, id);
  if (schedule?.enabled) await admitRun(auth, content.document);
  const row = await updatePlan(getDb(), { id, orgId: auth.orgId, ...content, createdBy: actorId(auth) });
  if (!row) throw notFound(`plan ${id}`);
  return toPlanRecord(row, true);
}

export async function removePlan(orgId: string, id: string): Promise<void> {
  if (!(await deletePlan(getDb(), id, orgId))) throw notFound(`plan ${id}`);
}

export async function loadPlanVersions(orgId: string, id: string, reveal = false): Promise<PlanVersion[]> {
  const rows = await listPlanVersions(getDb(), id, orgId);
  if (!rows) throw notFound(`plan ${id}`);
  return rows.map((r) => ({ version: r.version, name: r.name, ...shown(r, reveal), createdAt: r.createdAt.toISOString() }));
}
