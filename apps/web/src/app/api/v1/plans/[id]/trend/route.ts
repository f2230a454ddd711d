import { apiHandler, json } from "@/server/http/api-handler";
import { notFound } from "@/server/http/errors";
import { loadPlanTrend } from "@/server/runs/plan-trend";

/** GET /api/v1/plans/{id}/trend → p95, capacity, errors and throughput of the plan's finished runs, oldest first, regressions against its baseline flagged. */
export const GET = apiHandler({
  permission: "plans:read",
  handler: async ({ params, auth }) => {
    const trend = await loadPlanTrend(auth.orgId, params.id ?? "");
    if (!trend) throw notFound(`plan ${params.id}`);
    return json(trend);
  },
});
