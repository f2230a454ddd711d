import { setBaselineBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { clearBaseline, markBaseline } from "@/server/runs/run-meta";

/**
 * PUT /api/v1/plans/{id}/baseline {"runId"} → {"planId", "baselineRunId"}: the run (a finished run
 * of this plan) its other runs are compared with; 400 naming runId for a run of another plan.
 */
export const PUT = apiHandler({
  permission: "runs:write",
  body: setBaselineBodySchema,
  handler: async ({ params, body, auth }) => json(await markBaseline(auth.orgId, params.id ?? "", body.runId)),
});

/** DELETE /api/v1/plans/{id}/baseline → 204: the plan has no baseline. */
export const DELETE = apiHandler({
  permission: "runs:write",
  handler: async ({ params, auth }) => {
    await clearBaseline(auth.orgId, params.id ?? "");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});
