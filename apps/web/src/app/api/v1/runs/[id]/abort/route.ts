import { apiHandler, json } from "@/server/http/api-handler";
import { abortRun } from "@/server/runs/runs";

/** POST /api/v1/runs/{id}/abort → 202: a queued run ends aborted now; a running one is stopped by the hub. */
export const POST = apiHandler({
  permission: "runs:write",
  handler: async ({ params, auth }) => json(await abortRun(params.id ?? "", auth.orgId), 202),
});
