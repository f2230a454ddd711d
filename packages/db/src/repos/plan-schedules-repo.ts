import { and, eq } from "drizzle-orm";
import type { Db } from "../client";
import { newId } from "../ids";
import { planSchedules } from "../schema";

export type PlanScheduleRow = typeof planSchedules.$inferSelect;

export async function getPlanSchedule(db: Db, orgId: string, planId: string): Promise<PlanScheduleRow | null> {
  const [row] = await db
    .select()
    .from(planSchedules)
    .where(and(eq(planSchedules.orgId, orgId), eq(planSchedules.planId, planId)));
  return row ?? null;
}

/** A schedule by id, of any org: for the hub, which fires every org's schedules. */
export async function getScheduleOfAnyOrg(db: Db, id: string): Promise<PlanScheduleRow | null> {
  const [row] = await db.select().from(planSchedules).where(eq(planSchedules.id, id));
  return row ?? null;
}

/** Creates the plan's schedule or changes it (one per plan); the caller checked the plan is the org's. */
export async function upsertPlanSchedule(
  db: Db,
  input: { orgId: string; planId: string; cron: string; timezone: string; enabled: boolean; createdBy: string | null },
): Promise<PlanScheduleRow> {
  const [row] = await db
    .insert(planSchedules)
    .values({ id: newId("sch"), ...input })
    .onConflictDoUpdate({ target: planSchedules.planId, set: { cron: input.cron, timezone: input.timezone, enabled: input.enabled, updatedAt: new Date() } })
    .returning();
  return row!;
}

export async function deletePlanSchedule(db: Db, orgId: string, planId: string): Promise<boolean> {
  const rows = await db
    .delete(planSchedules)
    .where(and(eq(planSchedules.orgId, orgId), eq(planSchedules.planId, planId)))
    .returning({ id: planSchedules.id });
  return rows.length === 1;
}

/** What the schedule's last firing did: the run it started, or why it started none. */
export async function recordScheduleFiring(db: Db, id: string, result: { runId: string } | { error: string }): Promise<void> {
  await db
    .update(planSchedules)
    .set({ lastRunAt: new Date(), lastRunId: "runId" in result ? result.runId : null, lastError: "error" in result ? result.error : null })
    .where(eq(planSchedules.id, id));
}
