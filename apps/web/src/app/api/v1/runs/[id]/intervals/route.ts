import { apiHandler, json } from "@/server/http/api-handler";
import { loadIntervals } from "@/server/runs/runs";

/** GET /api/v1/runs/{id}/intervals → {"intervals": IntervalPoint[]}, one per second, all shards merged. */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ params, auth }) => json({ intervals: await loadIntervals(params.id ?? "", auth.orgId) }),
});
