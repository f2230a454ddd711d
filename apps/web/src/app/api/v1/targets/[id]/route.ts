import { apiHandler } from "@/server/http/api-handler";
import { removeHost } from "@/server/targets/targets";

/** DELETE /api/v1/targets/{id} → 204; runs against the host are refused again (hosted mode). */
export const DELETE = apiHandler({
  permission: "org:admin",
  handler: async ({ params, auth }) => {
    await removeHost(auth.orgId, params.id ?? "");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});
