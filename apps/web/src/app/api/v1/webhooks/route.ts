import { createWebhookBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { addWebhook, listOrgWebhooks } from "@/server/webhooks/webhooks";

/** POST /api/v1/webhooks {"url", "events"} → 201 {"webhook", "secret"}: the signing secret is shown this once. Org admins, signed in. */
export const POST = apiHandler({
  permission: "org:admin",
  body: createWebhookBodySchema,
  handler: async ({ body, auth }) => json(await addWebhook(auth, body), 201),
});

/** GET /api/v1/webhooks → {"webhooks": [...]}, newest first, deleted ones included (with disabledAt); never the secrets. */
export const GET = apiHandler({
  permission: "org:admin",
  handler: async ({ auth }) => json({ webhooks: await listOrgWebhooks(auth.orgId) }),
});
