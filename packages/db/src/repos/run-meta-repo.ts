import { and, eq, isNotNull } from "drizzle-orm";
import type { Db } from "../client";
import { plans, runs } from "../schema";

/** Tags and notes on runs and plans, and a plan's baseline run. Every write is scoped to the org. */

type Meta = { tags?: string[]; notes?: string };

/** Changes the run's tags and/or notes; false when the org has no such run. */
export async function setRunMeta(db: Db, orgId: string, runId: string, meta: Meta): Promise<boolean> {
  const rows = await db
    .update(runs)
    .set(meta)
    .where(and(eq(runs.id, runId), eq(runs.orgId, orgId)))
    .returning({ id: runs.id });
  return rows.length === 1;
}

/** Changes the plan's tags and/or notes (not a new version: they describe the plan, not what it runs); false when the org has no such plan. */
export async function setPlanMeta(db: Db, orgId: string, planId: string, meta: Meta): Promise<boolean> {
  const rows = await db
    .update(plans)
    .set(meta)
    .where(and(eq(plans.id, planId), eq(plans.orgId, orgId)))
    .returning({ id: plans.id });
  return rows.length === 1;
}

/** Sets (or with null clears) the plan's baseline run; false when the org has no such plan. The caller checks the run is the plan's. */
export async function setPlanBaseline(db: Db, orgId: string, planId: string, runId: string | null): Promise<boolean> {
  const rows = await db
    .update(plans)
    .set({ baselineRunId: runId })
    .where(and(eq(plans.id, planId), eq(plans.orgId, orgId)))
    .returning({ id: plans.id });
  return rows.length === 1;
}

/** The baseline run ids of the org's plans that have one. */
export async function listBaselineRunIds(db: Db, orgId: string): Promise<Set<string>> {
  const rows = await db
    .select({ id: plans.baselineRunId })
    .from(plans)
    .where(and(eq(plans.orgId, orgId), isNotNull(plans.baselineRunId)));
  return new Set(rows.map((r) => r.id!));
}
