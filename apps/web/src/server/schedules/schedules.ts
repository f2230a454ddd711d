import type { PlanSchedule, PlanScheduleBody } from "@volley/contracts";
import { deletePlanSchedule, getPlan, getPlanSchedule, upsertPlanSchedule, type PlanScheduleRow } from "@volley/db";
import { nextPlanFiring, removePlanScheduler, upsertPlanScheduler } from "@volley/queue";
import type { AuthContext } from "../auth/auth";
import { notFound } from "../http/errors";
import { getDb, withRedisDeadline } from "../http/services";
import { admitRun } from "../targets/targets";
import { getSchedulesQueue } from "./queues";

/**
 * A plan's cron schedule. The row in plan_schedules is the truth; a BullMQ job scheduler mirrors
 * it (upserted on every save, removed when disabled or deleted) and a hub turns each firing into a
 * run of the plan's latest version (apps/hub schedules/schedule-worker.ts).
 */

function toSchedule(row: PlanScheduleRow, next: number | null): PlanSchedule {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    id: row.id,
    planId: row.planId,
    cron: row.cron,
    timezone: row.timezone,
    enabled: row.enabled,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    lastRunAt: iso(row.lastRunAt),
    lastRunId: row.lastRunId,
    lastError: row.lastError,
    nextRunAt: row.enabled && next !== null ? new Date(next).toISOString() : null,
  };
}

/** The plan's schedule, or null when it has none; 404 when the org has no such plan. */
export async function loadSchedule(orgId: string, planId: string): Promise<PlanSchedule | null> {
  const db = getDb();
  if (!(await getPlan(db, planId, orgId))) throw notFound(`plan ${planId}`);
  const row = await getPlanSchedule(db, orgId, planId);
  if (!row) return null;
  const next = row.enabled ? await withRedisDeadline("read the schedule's next run", nextPlanFiring(getSchedulesQueue(), planId)) : null;
  return toSchedule(row, next);
}

/**
 * Creates or replaces the plan's schedule. The plan's target is admitted now as a run would be
 * (target policy, quotas), so a schedule is never saved that could only start refused runs.
 */
export async function saveSchedule(auth: AuthContext, planId: string, body: PlanScheduleBody): Promise<{ schedule: PlanSchedule; created: boolean }> {
  const db = getDb();
  const plan = await getPlan(db, planId, auth.orgId);
  if (!plan) throw notFound(`plan ${planId}`);
  if (body.enabled) await admitRun(auth, plan.document);
  const existed = (await getPlanSchedule(db, auth.orgId, planId)) !== null;
  const createdBy = auth.actor.kind === "user" ? auth.actor.userId : auth.actor.kind === "token" ? auth.actor.tokenId : null;
  const row = await upsertPlanSchedule(db, { orgId: auth.orgId, planId, cron: body.cron, timezone: body.timezone, enabled: body.enabled, createdBy });
  const queue = getSchedulesQueue();
  const next = body.enabled
    ? await withRedisDeadline(
        "save the schedule",
        upsertPlanScheduler(queue, { id: row.id, planId, orgId: auth.orgId, cron: row.cron, timezone: row.timezone }),
      )
    : (await withRedisDeadline("pause the schedule", removePlanScheduler(queue, planId)), null);
  return { schedule: toSchedule(row, next), created: !existed };
}

export async function removeSchedule(orgId: string, planId: string): Promise<void> {
  const db = getDb();
  if (!(await getPlan(db, planId, orgId))) throw notFound(`plan ${planId}`);
  // The job scheduler first: a row without one fires nothing, a scheduler without a row only starts nothing (the hub removes it).
  await withRedisDeadline("remove the schedule", removePlanScheduler(getSchedulesQueue(), planId));
  if (!(await deletePlanSchedule(db, orgId, planId))) throw notFound(`schedule of plan ${planId}`);
}
