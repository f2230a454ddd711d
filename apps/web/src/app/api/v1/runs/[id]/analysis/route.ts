import { apiHandler, json } from "@/server/http/api-handler";
import { loadRunAnalysis } from "@/server/runs/run-analysis";

/** GET /api/v1/runs/{id}/analysis → RunAnalysis: percentile spectra per timed kind and the per-agent breakdown. */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ params, auth }) => json(await loadRunAnalysis(params.id ?? "", auth.orgId)),
});
