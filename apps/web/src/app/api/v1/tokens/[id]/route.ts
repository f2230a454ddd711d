import { apiHandler } from "@/server/http/api-handler";
import { revokeToken } from "@/server/tokens/tokens";

/** DELETE /api/v1/tokens/{id} → 204: the token stops working at once. 404 when the org has no such live token. */
export const DELETE = apiHandler({
  permission: "org:admin",
  handler: async ({ params, auth }) => {
    await revokeToken(auth.orgId, params.id ?? "");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});
