import { apiHandler } from "@/server/http/api-handler";
import { revokeJoinToken } from "@/server/agents/agents";

/** DELETE /api/v1/agent-tokens/{id} → 204: no new agent enrols with it, and agents that did are dropped at their next heartbeat. 404 when the org has no such live token. */
export const DELETE = apiHandler({
  permission: "org:admin",
  handler: async ({ params, auth }) => {
    await revokeJoinToken(auth.orgId, params.id ?? "");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});
