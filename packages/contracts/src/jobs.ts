import { z } from "zod";
import { planSchema } from "./plan";
import { runFinishedPayloadSchema, webhookTestPayloadSchema } from "./webhooks";

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
  /**
   * The shard plan's target credentials, sealed (packages/db plan-secrets-box): `plan` holds them
   * redacted, so Redis never has them in clear; the hub opens them into the plan it hands the agent.
   */
  secrets: z.string().nullish(),
  /**
   * The agent the planner sized this shard for (by its capacity); the dispatcher hands the shard to
   * it while it is idle, and to any idle agent of the pool once it waited too long. null or absent:
   * any idle agent (fewer agents were idle at run start than the plan asked for).
   */
  agentId: z.string().min(1).nullish(),
});
export type ShardJob = z.infer<typeof shardJobSchema>;

/** One delivery of one event to one webhook. The body is fixed here so every retry sends the same bytes; the secret is read at delivery. */
export const webhookJobSchema = z.object({
  webhookId: z.string().min(1),
  payload: z.discriminatedUnion("event", [runFinishedPayloadSchema, webhookTestPayloadSchema]),
});
export type WebhookJob = z.infer<typeof webhookJobSchema>;
