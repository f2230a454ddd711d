import { listRunsQuerySchema, startRunBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { loadPlan } from "@/server/plans/plans";
import { createRun, loadRunPage } from "@/server/runs/runs";

/**
 * POST /api/v1/runs {"plan": {...}} or {"planId"} → 201 {"id", "warnings"}: the run is queued for a
 * hub to execute; a saved plan runs its latest version and the run is listed under it. 409
 * not_enough_agents when the plan's pool has fewer agents connected than it asks for; `warnings`
 * say when the agents it gets are likely saturated (see contracts agent-load.ts).
 */
export const POST = apiHandler({
  permission: "runs:write",
  body: startRunBodySchema,
  handler: async ({ body, auth }) => {
    const saved = body.planId !== undefined ? await loadPlan(auth.orgId, body.planId, true) : null;
    const { id, warnings } = await createRun(saved ? saved.plan : body.plan!, auth.orgId, saved?.id ?? null, auth.actor, saved?.version ?? null);
    return json({ id, warnings }, 201, { location: `/api/v1/runs/${id}` });
  },
});

/**
 * GET /api/v1/runs[?limit=50&cursor=…&status=…&planId=…] → {"runs": [...], "next": cursor | null},
 * most recent first; pass `next` back as `cursor` for the following page.
 */
export const GET = apiHandler({
  permission: "runs:read",
  query: listRunsQuerySchema,
  handler: async ({ query, auth }) => json(await loadRunPage(auth.orgId, query)),
});
