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
});
export type CreateWebhookBody = z.infer<typeof createWebhookBodySchema>;

export const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(webhookEventSchema),
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
  }),
});
export type RunFinishedPayload = z.infer<typeof runFinishedPayloadSchema>;
