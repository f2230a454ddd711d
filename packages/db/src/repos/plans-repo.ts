import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { Plan } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { plans, planVersions } from "../schema";
import { sealPlan } from "../plan-secrets-box";
import type { SecretKeys } from "../secret-box";

export type PlanRow = typeof plans.$inferSelect;
export type PlanVersionRow = typeof planVersions.$inferSelect;

/**
 * What a save writes: the validated plan, and the YAML its author wrote (kept as written; null when
 * saved as JSON). Its target credentials are stored sealed under `secretsKeys` (plan-secrets-box.ts),
 * the plan and text with them redacted.
 */
interface PlanContent {
  document: Plan;
  source?: string | null;
  secretsKeys?: SecretKeys | null;
}

/** Saves a new plan as version 1. */
export async function insertPlan(db: Db, input: PlanContent & { orgId: string; createdBy?: string | null }): Promise<PlanRow> {
  const sealed = sealPlan(input.document, input.source, input.secretsKeys ?? null);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(plans)
      .values({ id: newId("pln"), orgId: input.orgId, name: input.document.name, ...sealed, version: 1 })
      .returning();
    await tx.insert(planVersions).values({ planId: row!.id, version: 1, name: row!.name, ...sealed, createdBy: input.createdBy ?? null });
    return row!;
  });
}

export async function getPlan(db: Db, id: string, orgId: string): Promise<PlanRow | null> {
  const [row] = await db
    .select()
    .from(plans)
    .where(and(eq(plans.id, id), eq(plans.orgId, orgId)));
  return row ?? null;
}

export async function listPlans(db: Db, orgId: string, opts: { limit?: number; offset?: number } = {}): Promise<PlanRow[]> {
  return db
    .select()
    .from(plans)
    .where(eq(plans.orgId, orgId))
    .orderBy(desc(plans.updatedAt), desc(plans.id))
    .limit(opts.limit ?? 50)
    .offset(opts.offset ?? 0);
}

/**
 * One page of an org's plans, most recently changed first, bounded by count and by size: at most
 * `limit` plans whose documents and YAML texts together fit in `maxBytes` (the first plan always
 * does), starting after the plan `after` (the previous page's last id) or skipping `offset`. Sizes
 * are read before the documents, so a page of large plans never loads more than it returns.
 * Null when `after` names no plan of the org.
 */
export async function listPlanPage(
  db: Db,
  orgId: string,
  opts: { limit: number; maxBytes: number; offset?: number; after?: string },
): Promise<{ rows: PlanRow[]; more: boolean } | null> {
  if (opts.after !== undefined && !(await getPlan(db, opts.after, orgId))) return null;
  const heads = await db
    .select({ id: plans.id, bytes: sql<number>`octet_length(${plans.document}::text) + coalesce(octet_length(${plans.source}), 0)`.mapWith(Number) })
    .from(plans)
    .where(
      and(
        eq(plans.orgId, orgId),
        // Compared inside PostgreSQL: timestamps keep microseconds there that a JS Date would drop.
        opts.after !== undefined ? sql`(${plans.updatedAt}, ${plans.id}) < (select p.updated_at, p.id from plans p where p.id = ${opts.after})` : undefined,
      ),
    )
    .orderBy(desc(plans.updatedAt), desc(plans.id))
    .limit(opts.limit + 1)
    .offset(opts.offset ?? 0);
  const picked: string[] = [];
  let bytes = 0;
  for (const head of heads.slice(0, opts.limit)) {
    if (picked.length > 0 && bytes + head.bytes > opts.maxBytes) break;
    picked.push(head.id);
    bytes += head.bytes;
  }
  if (picked.length === 0) return { rows: [], more: false };
  const byId = new Map((await db.select().from(plans).where(inArray(plans.id, picked))).map((r) => [r.id, r]));
  // A plan deleted between the two reads is left out rather than failing the page.
  const rows = picked.flatMap((id) => byId.get(id) ?? []);
  return { rows, more: heads.length > picked.length };
}

/**
 * Replaces a plan's document and records it as the next version. The row is locked so two
 * concurrent updates get consecutive versions instead of colliding. Null when the org has no such plan.
 */
export async function updatePlan(db: Db, input: PlanContent & { id: string; orgId: string; createdBy?: string | null }): Promise<PlanRow | null> {
  const sealed = sealPlan(input.document, input.source, input.secretsKeys ?? null);
  return db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(plans)
      .where(and(eq(plans.id, input.id), eq(plans.orgId, input.orgId)))
      .for("update");
    if (!current) return null;
    const version = current.version + 1;
    const [row] = await tx
      .update(plans)
      .set({ name: input.document.name, ...sealed, version, updatedAt: new Date() })
      .where(eq(plans.id, input.id))
      .returning();
    await tx.insert(planVersions).values({
      planId: input.id,
      version,
      name: input.document.name,
      ...sealed,
      createdBy: input.createdBy ?? null,
    });
    return row!;
  });
}

/** Deletes a plan and its versions; its runs stay (their plan_id becomes null). */
export async function deletePlan(db: Db, id: string, orgId: string): Promise<boolean> {
  const rows = await db
    .delete(plans)
    .where(and(eq(plans.id, id), eq(plans.orgId, orgId)))
    .returning({ id: plans.id });
  return rows.length === 1;
}

/** Every version of a plan of this org, oldest first; null when the org has no such plan. */
export async function listPlanVersions(db: Db, planId: string, orgId: string): Promise<PlanVersionRow[] | null> {
  if (!(await getPlan(db, planId, orgId))) return null;
  return db.select().from(planVersions).where(eq(planVersions.planId, planId)).orderBy(asc(planVersions.version));
}
