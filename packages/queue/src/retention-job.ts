import { retentionJobSchema, type RetentionJob } from "@volley/contracts";
import type { Queue } from "bullmq";
import { defineJob } from "./job-definition";

/** Housekeeping jobs (retention); one job scheduler per deployment, whichever hub registers it last. */
export const MAINTENANCE_QUEUE = "volley-maintenance";
export const RETENTION_SCHEDULER_ID = "runs-retention";

/**
 * Deletes old runs' data as the retention settings say (contracts retention.ts). Retried: a
 * database that was down at the hour runs the same deletion again later (deletions are idempotent).
 */
export const retentionJob = defineJob({
  name: "runs.retention",
  schema: retentionJobSchema,
  options: {
    attempts: 3,
    backoff: { type: "exponential", delay: 60_000 },
    removeOnComplete: { age: 7 * 86_400, count: 100 },
    removeOnFail: { age: 30 * 86_400 },
  },
});

/**
 * Registers (or updates) the repeatable retention job: BullMQ's job scheduler makes one job every
 * `everyMs` across all hubs. Retention off in both tiers removes the scheduler.
 */
export async function scheduleRetention(queue: Queue, settings: RetentionJob, everyMs = 3_600_000): Promise<void> {
  const data = retentionJob.schema.parse(settings);
  if (data.framesDays === null && data.runsDays === null) {
    await queue.removeJobScheduler(RETENTION_SCHEDULER_ID);
    return;
  }
  await queue.upsertJobScheduler(RETENTION_SCHEDULER_ID, { every: everyMs }, { name: retentionJob.name, data, opts: retentionJob.options });
}
