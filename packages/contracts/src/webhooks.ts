import { z } from "zod";
import { runStatusSchema, runSummarySchema } from "./run";

/** Outbound webhooks: what an org subscribes to, and exactly what Volley POSTs to it. */

export const WEBHOOK_EVENTS = ["run.finished"] as const;
export const webhookEventSchema = z.enum(WEBHOOK_EVENTS, { error: 'use "run.finished" (sent once when a run ends, whatever its status)' });
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/** A webhook's body: Volley's own JSON document, or a Slack incoming-webhook message (also read by Mattermost, Discord's /slack endpoint, Teams workflows). */
export const WEBHOOK_FORMATS = ["generic", "slack"] as const;
export const webhookFormatSchema = z.enum(WEBHOOK_FORMATS, { error: 'use "generic" (Volley\'s JSON document) or "slack" (a Slack incoming-webhook message)' });
export type WebhookFormat = z.infer<typeof webhookFormatSchema>;

/** Receivers check `x-volley-signature: sha256=<hex>`, the HMAC-SHA256 of the raw body under the webhook's secret. */
export const WEBHOOK_HEADERS = {
  signature: "x-volley-signature",
  event: "x-volley-event",
  delivery: "x-volley-delivery",
} as const;

export const createWebhookBodySchema = z.strictObject({
  url: z
    .url({ protocol: /^https?$/, error: "give the receiver's address as an http:// or https:// URL, like https://ci.example.com/volley" })
    .max(2000, "keep the URL under 2000 characters"),
  events: z.array(webhookEventSchema).min(1, 'pick at least one event: "run.finished"').default(["run.finished"]),
  format: webhookFormatSchema.default("generic"),
});
export type CreateWebhookBody = z.infer<typeof createWebhookBodySchema>;

export const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(webhookEventSchema),
  format: webhookFormatSchema,
  createdAt: z.string(),
  /** When it was deleted; deleted webhooks never fire. */
  disabledAt: z.string().nullable(),
});
export type Webhook = z.infer<typeof webhookSchema>;

export const createWebhookResponseSchema = z.object({
  webhook: webhookSchema,
  /** The signing secret: shown this once. To rotate it, delete the webhook and create it again. */
  secret: z.string(),
});

/** The body of a `run.finished` delivery. */
export const runFinishedPayloadSchema = z.object({
  event: z.literal("run.finished"),
  run: z.object({
    id: z.string(),
    name: z.string(),
    status: runStatusSchema,
    reason: z.string().nullable(),
    summary: runSummarySchema.nullable(),
    /** The run's page in the web UI, from the hub's VOLLEY_PUBLIC_URL (null when the hub has none). */
    url: z.string().nullable(),
  }),
  /**
   * Present when this delivery corrects an earlier one for the same run: measurements stored after
   * the run ended changed its summary or its outcome, and `run` is the corrected whole (it supersedes
   * the earlier delivery). `previous` is the outcome that delivery reported.
   */
  restatement: z
    .object({
      previous: z.object({ status: runStatusSchema, reason: z.string().nullable() }),
      why: z.string(),
    })
    .optional(),
});
export type RunFinishedPayload = z.infer<typeof runFinishedPayloadSchema>;

/** The body of a test delivery (POST /api/v1/webhooks/{id}/test), sent as event `webhook.test`. */
export const webhookTestPayloadSchema = z.object({
  event: z.literal("webhook.test"),
  webhook: z.object({ id: z.string() }),
  message: z.string(),
});
export type WebhookTestPayload = z.infer<typeof webhookTestPayloadSchema>;

/** One attempt to deliver to a webhook, and what its receiver answered. */
export const webhookDeliverySchema = z.object({
  id: z.number().int(),
  /** Sent as x-volley-delivery; the same across the retries of one event. */
  deliveryId: z.string(),
  event: z.string(),
  runId: z.string().nullable(),
  attempt: z.number().int(),
  test: z.boolean(),
  /** The receiver's HTTP status; null when none came (refused, timed out, unreachable). */
  status: z.number().int().nullable(),
  ok: z.boolean(),
  error: z.string().nullable(),
  /** The first 500 characters of the receiver's answer. */
  responseExcerpt: z.string().nullable(),
  durationMs: z.number(),
  at: z.string(),
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

/** POST /api/v1/webhooks/{id}/test → the attempt, once the hub has made it (202 with only its id when it has not within a few seconds). */
export const webhookTestResponseSchema = z.object({ deliveryId: z.string(), delivery: webhookDeliverySchema.nullable() });

/** GET /api/v1/webhooks/{id}/deliveries query. */
export const listDeliveriesQuerySchema = z.strictObject({
  limit: z.coerce
    .number("must be a whole number from 1 to 100")
    .int("must be a whole number from 1 to 100")
    .min(1, "must be a whole number from 1 to 100")
    .max(100, "must be a whole number from 1 to 100")
    .default(20),
});
