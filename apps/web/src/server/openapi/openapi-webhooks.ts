import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import type { Status } from "./openapi";

/** The webhooks part of the OpenAPI document (openapi.ts builds the rest and names the schemas). */

export const RUN_FINISHED_PAYLOAD = "RunFinishedPayload";

type Content = { description: string; content: { "application/json": { schema: z.ZodType } } };

export function webhookPaths(c: {
  Webhook: z.ZodType;
  CreateWebhookBody: z.ZodType;
  CreateWebhookResponse: z.ZodType;
  jsonBody: (schema: z.ZodType, description: string) => Content;
  errors: (...statuses: Status[]) => Record<string, Content>;
  noContent: (description: string) => { description: string };
  sessionOnly: Record<string, string[]>[];
}): RouteConfig[] {
  const { Webhook, CreateWebhookBody, CreateWebhookResponse, jsonBody, errors, noContent, sessionOnly } = c;
  return [
    {
      method: "post",
      path: "/api/v1/webhooks",
      operationId: "createWebhook",
      tags: ["webhooks"],
      summary: "Add a webhook (the signing secret is shown this once)",
      description:
        "When a run ends, the hub POSTs `RunFinishedPayload` to `url` with `x-volley-event: run.finished`, `x-volley-delivery` (unique per run and webhook, the same on retries) and `x-volley-signature: sha256=<hex HMAC-SHA256 of the raw body under the secret>`. A run corrected after it ended (measurements stored late changed its summary or outcome) is sent again, as a new delivery, with `restatement` saying what the earlier one reported. Answer 2xx within 5 s; anything else is retried 5 times with exponential backoff from 2 s. To rotate the secret, delete the webhook and add it again. Needs a session of an org admin or owner.",
      security: sessionOnly,
      request: { body: { required: true, content: { "application/json": { schema: CreateWebhookBody } } } },
      responses: { 201: jsonBody(CreateWebhookResponse, "The webhook and its signing secret."), ...errors(400, 500, 503) },
      callbacks: {
        runFinished: {
          "{$request.body#/url}": {
            post: {
              requestBody: { content: { "application/json": { schema: { $ref: `#/components/schemas/${RUN_FINISHED_PAYLOAD}` } } } },
              responses: { 200: { description: "Any 2xx acknowledges the delivery." } },
            },
          },
        },
      },
    },
    {
      method: "get",
      path: "/api/v1/webhooks",
      operationId: "listWebhooks",
      tags: ["webhooks"],
      summary: "List the organization's webhooks, newest first (never their secrets)",
      security: sessionOnly,
      responses: { 200: jsonBody(z.object({ webhooks: z.array(Webhook) }), "The webhooks, deleted ones with `disabledAt`."), ...errors(500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/webhooks/{id}",
      operationId: "deleteWebhook",
      tags: ["webhooks"],
      summary: "Delete a webhook; no delivery is sent to it from now on",
      security: sessionOnly,
      request: { params: z.object({ id: z.string().describe("The webhook id (`whk_…`).") }) },
      responses: { 204: noContent("Deleted."), ...errors(404, 500, 503) },
    },
  ];
}
