import { apiHandler } from "@/server/http/api-handler";
import { removeOrgAgent } from "@/server/agents/agents";

/** DELETE /api/v1/agents/{id} → 204: an offline agent leaves the list (if it connects again, it enrolls anew). 404 when the org has no such agent, 409 while it is busy or connected. Org admins, signed in. */
export const DELETE = apiHandler({
  permission: "org:admin",
  handler: async ({ params, auth }) => {
    await removeOrgAgent(auth.orgId, params.id ?? "");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});
