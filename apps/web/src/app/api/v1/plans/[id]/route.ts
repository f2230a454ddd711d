import { metaPatchBodySchema, savePlanBodySchema } from "@volley/contracts";
import { updatePlanMeta } from "@/server/runs/run-meta";
import { apiHandler, json } from "@/server/http/api-handler";
import { loadPlan, removePlan, savePlanVersion, seesPlanSecrets } from "@/server/plans/plans";

/** GET /api/v1/plans/{id} → the plan's latest version (target credentials redacted for viewers and read tokens). */
export const GET = apiHandler({
  permission: "plans:read",
  handler: async ({ params, auth }) => json(await loadPlan(auth.orgId, params.id ?? "", seesPlanSecrets(auth))),
});

/** PUT /api/v1/plans/{id} {"plan"} → the plan, saved as its next version. */
export const PUT = apiHandler({
  permission: "plans:write",
  body: savePlanBodySchema,
  handler: async ({ params, body, auth }) => json(await savePlanVersion(auth, params.id ?? "", body)),
});

/** DELETE /api/v1/plans/{id} → 204; its versions go with it, its runs stay. */
export const DELETE = apiHandler({
  permission: "plans:write",
  handler: async ({ params, auth }) => {
    await removePlan(auth.orgId, params.id ?? "");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});

/** PATCH /api/v1/plans/{id} {"tags"?, "notes"?} → the plan: describes it, so no new version is made. */
export const PATCH = apiHandler({
  permission: "plans:write",
  body: metaPatchBodySchema,
  handler: async ({ params, body, auth }) => json(await updatePlanMeta(auth.orgId, params.id ?? "", body)),
});
