import { listDeliveriesQuerySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { loadDeliveries } from "@/server/webhooks/webhook-deliveries";

/** GET /api/v1/webhooks/{id}/deliveries[?limit=20] → {"deliveries": [...]}: each attempt, newest first, with the receiver's status and the start of its answer. */
export const GET = apiHandler({
  permission: "org:admin",
  query: listDeliveriesQuerySchema,
  handler: async ({ params, query, auth }) => json({ deliveries: await loadDeliveries(auth.orgId, params.id ?? "", query.limit) }),
});
