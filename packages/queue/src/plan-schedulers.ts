import type { Queue } from "bullmq";
import { scheduledRunJob } from "./catalog";

/** The BullMQ job scheduler id of a plan's schedule: one per plan, so an update replaces it. */
export const planSchedulerId = (planId: string) => `plan-schedule:${planId}`;

/**
 * Creates or replaces the job scheduler that fires a plan's schedule: a `scheduledRunJob` per
 * firing of `cron` in `timezone`. Returns when it fires next (epoch ms), as BullMQ planned it.
 * The cron is not checked here (contracts' planScheduleBodySchema does, for the API).
 */
export async function upsertPlanScheduler(
  queue: Queue,
  s: { id: string; planId: string; orgId: string; cron: string; timezone: string },
): Promise<number | null> {
  const data = scheduledRunJob.schema.parse({ scheduleId: s.id, planId: s.planId, orgId: s.orgId });
  await queue.upsertJobScheduler(
    planSchedulerId(s.planId),
    { pattern: s.cron, tz: s.timezone },
    { name: scheduledRunJob.name, data, opts: scheduledRunJob.options },
  );
  return nextPlanFiring(queue, s.planId);
}

/** When a plan's schedule fires next (epoch ms); null when it has no job scheduler (disabled or deleted). */
export async function nextPlanFiring(queue: Queue, planId: string): Promise<number | null> {
  const js = await queue.getJobScheduler(planSchedulerId(planId));
  return js?.next ?? null;
}

/** Stops a plan's schedule from firing; true when there was one. */
export async function removePlanScheduler(queue: Queue, planId: string): Promise<boolean> {
  return queue.removeJobScheduler(planSchedulerId(planId));
}
