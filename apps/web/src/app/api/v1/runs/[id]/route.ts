import { apiHandler, json } from "@/server/http/api-handler";
import { loadRun } from "@/server/runs/runs";

/** GET /api/v1/runs/{id} → the run (runSchema); the summary is live while it runs. */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ params, auth }) => json(await loadRun(params.id ?? "", auth.orgId)),
});
