import { apiHandler, json } from "@/server/http/api-handler";
import { verifyHost } from "@/server/targets/targets";

/** POST /api/v1/targets/{id}/verify → the host, `verified` as the proof was found just now. */
export const POST = apiHandler({
  permission: "org:admin",
  handler: async ({ params, auth }) => json(await verifyHost(auth.orgId, params.id ?? "")),
});
