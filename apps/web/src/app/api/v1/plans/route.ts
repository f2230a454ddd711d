import { listPlansQuerySchema, savePlanBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { createPlan, loadPlanPage, seesPlanSecrets } from "@/server/plans/plans";

/** POST /api/v1/plans {"plan"} → 201 the saved plan (version 1). */
export const POST = apiHandler({
  permission: "plans:write",
  body: savePlanBodySchema,
  handler: async ({ body, auth }) => {
    const record = await createPlan(auth, body);
    return json(record, 201, { location: `/api/v1/plans/${record.id}` });
  },
});

/**
 * GET /api/v1/plans[?limit&cursor|offset] → {"plans": [...], "next": cursor | null}, most recently
 * changed first; a page also ends at LIST_PAGE_MAX_BYTES of plans (pass `next` back as `cursor`).
 */
export const GET = apiHandler({
  permission: "plans:read",
  query: listPlansQuerySchema,
  handler: async ({ query, auth }) => json(await loadPlanPage(auth.orgId, query, seesPlanSecrets(auth))),
});
