import { runJobSchema, scheduledRunJobSchema, shardJobSchema, webhookJobSchema } from "@volley/contracts";
import { defineJob } from "./job-definition";

/** Every queue Volley uses. BullMQ queue names may not contain ':'. */
export const QUEUE_NAMES = {
  runs: "volley-runs",
  shards: (pool: string) => `volley-shards-${pool}`,
  webhooks: "volley-webhooks",
  schedules: "volley-schedules",
} as const;

/**
 * One run, planned into shards by a hub. Not retried: executing a run twice would send load twice,
 * so a failure ends the run `errored` with the reason instead.
 */
export const runJob = defineJob({
  name: "run.execute",
  schema: runJobSchema,
  options: { attempts: 1, removeOnComplete: { age: 86_400, count: 1000 }, removeOnFail: { age: 7 * 86_400 } },
});

/**
 * One shard, held active by the hub worker while an agent runs it. Not retried for the same reason;
 * a lost agent fails the job with the agent named.
 */
export const shardJob = defineJob({
  name: "shard.execute",
  schema: shardJobSchema,
  options: { attempts: 1, removeOnComplete: { age: 86_400, count: 1000 }, removeOnFail: { age: 7 * 86_400 } },
});

/**
 * One webhook delivery (a POST of one event to one receiver). Retried, unlike runs: a receiver that
 * is down or answers non-2xx gets the same body again at 2, 4, 8, 16, 32 s, then the job fails.
 */
export const webhookJob = defineJob({
  name: "webhook.deliver",
  schema: webhookJobSchema,
  options: {
    attempts: 6,
    backoff: { type: "exponential", delay: 2000 },
    removeOnComplete: { age: 86_400, count: 1000 },
    removeOnFail: { age: 7 * 86_400 },
  },
});

/**
 * One firing of a plan's schedule, emitted by its BullMQ job scheduler; a hub starts the plan's
 * latest version as a run. Not retried: a firing that failed is recorded on the schedule (its
 * lastError) and the next firing comes anyway, where a retry could start the run late or twice.
 */
export const scheduledRunJob = defineJob({
  name: "plan.scheduled-run",
  schema: scheduledRunJobSchema,
  options: { attempts: 1, removeOnComplete: { age: 86_400, count: 1000 }, removeOnFail: { age: 7 * 86_400 } },
});
