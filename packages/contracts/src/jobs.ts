import { z } from "zod";
import { planSchema } from "./plan";
import { runFinishedPayloadSchema } from "./webhooks";

/** Queue job payloads. Job definitions (queue, name, attempts, backoff) live in @volley/queue. */
export const runJobSchema = z.object({ runId: z.string().min(1) });
export type RunJob = z.infer<typeof runJobSchema>;

export const shardJobSchema = z.object({
  runId: z.string().min(1),
  shardId: z.string().min(1),
  index: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  /** The shard's own slice of the plan: connections and rates already divided. */
  plan: planSchema,
});
export type ShardJob = z.infer<typeof shardJobSchema>;

/** One delivery of one event to one webhook. The body is fixed here so every retry sends the same bytes; the secret is read at delivery. */
export const webhookJobSchema = z.object({
  webhookId: z.string().min(1),
  payload: runFinishedPayloadSchema,
});
export type WebhookJob = z.infer<typeof webhookJobSchema>;
