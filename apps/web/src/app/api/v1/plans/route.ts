import { pageQuerySchema, savePlanBodySchema } from "@volley/contracts";
import { apiHandler, json } from "../../../../server/api-handler";
import { createPlan, loadPlanList } from "../../../../server/plans";

/** POST /api/v1/plans {"plan"} → 201 the saved plan (version 1). */
export const POST = apiHandler({
  permission: "plans:write",
  body: savePlanBodySchema,
  handler: async ({ body, auth }) => {
    const record = await createPlan(auth, body.plan);
    return json(record, 201, { location: `/api/v1/plans/${record.id}` });
  },
});

/** GET /api/v1/plans[?limit&offset] → {"plans": [...]}, most recently changed first. */
export const GET = apiHandler({
  permission: "plans:read",
  query: pageQuerySchema,
  handler: async ({ query, auth }) => json({ plans: await loadPlanList(auth.orgId, query) }),
});
