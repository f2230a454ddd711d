import { and, asc, desc, eq } from "drizzle-orm";
import type { Plan } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { plans, planVersions } from "../schema";

export type PlanRow = typeof plans.$inferSelect;
export type PlanVersionRow = typeof planVersions.$inferSelect;

/** Saves a new plan as version 1. */
export async function insertPlan(db: Db, input: { orgId: string; document: Plan; createdBy?: string | null }): Promise<PlanRow> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(plans)
      .values({ id: newId("pln"), orgId: input.orgId, name: input.document.name, document: input.document, version: 1 })
      .returning();
    await tx.insert(planVersions).values({ planId: row!.id, version: 1, name: row!.name, document: row!.document, createdBy: input.createdBy ?? null });
    return row!;
  });
}

export async function getPlan(db: Db, id: string, orgId: string): Promise<PlanRow | null> {
  const [row] = await db.select().from(plans).where(and(eq(plans.id, id), eq(plans.orgId, orgId)));
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
 * Replaces a plan's document and records it as the next version. The row is locked so two
 * concurrent updates get consecutive versions instead of colliding. Null when the org has no such plan.
 */
export async function updatePlan(db: Db, input: { id: string; orgId: string; document: Plan; createdBy?: string | null }): Promise<PlanRow | null> {
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
      .set({ name: input.document.name, document: input.document, version, updatedAt: new Date() })
      .where(eq(plans.id, input.id))
      .returning();
    await tx.insert(planVersions).values({ planId: input.id, version, name: input.document.name, document: input.document, createdBy: input.createdBy ?? null });
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
