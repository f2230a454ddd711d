import { apiHandler, json } from "../../../../../../server/api-handler";
import { loadIntervals } from "../../../../../../server/runs";

/** GET /api/v1/runs/{id}/intervals → {"intervals": IntervalPoint[]}, one per second, all shards merged. */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ params, auth }) => json({ intervals: await loadIntervals(params.id ?? "", auth.orgId) }),
});
