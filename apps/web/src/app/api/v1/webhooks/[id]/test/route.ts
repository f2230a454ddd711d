import { apiHandler, json } from "@/server/http/api-handler";
import { sendTestDelivery } from "@/server/webhooks/webhook-deliveries";

/**
 * POST /api/v1/webhooks/{id}/test → 200 {"deliveryId", "delivery"}: one `webhook.test` event,
 * signed and shaped like the webhook's real ones and sent by a hub; `delivery` is what the
 * receiver answered. 202 with `delivery: null` when no hub made the attempt within a few seconds
 * (it shows in GET …/deliveries once made).
 */
export const POST = apiHandler({
  permission: "org:admin",
  handler: async ({ params, auth }) => {
    const out = await sendTestDelivery(auth.orgId, params.id ?? "");
    return json(out, out.delivery ? 200 : 202);
  },
});
