import { apiHandler } from "@/server/http/api-handler";
import { deleteWebhook } from "@/server/webhooks/webhooks";

/** DELETE /api/v1/webhooks/{id} → 204: no delivery is sent to it from now on. 404 when the org has no such live webhook. */
export const DELETE = apiHandler({
  permission: "org:admin",
  handler: async ({ params, auth }) => {
    await deleteWebhook(auth.orgId, params.id ?? "");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});
