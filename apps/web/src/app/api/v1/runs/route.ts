import { createRunBodySchema } from "@volley/contracts";
import { apiHandler, json } from "../../../../server/api-handler";
import { ApiError } from "../../../../server/errors";
import { createRun, loadRunList } from "../../../../server/runs";

/** POST /api/v1/runs {"plan": {...}} → 201 {"id"}: the run is queued for a hub to execute. */
export const POST = apiHandler({
  permission: "runs:write",
  body: createRunBodySchema,
  handler: async ({ body, auth }) => {
    const { id } = await createRun(body.plan, auth.orgId);
    return json({ id }, 201, { location: `/api/v1/runs/${id}` });
  },
});

/** GET /api/v1/runs[?limit=50] → {"runs": [...]}, most recent first. */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ req, auth }) => {
    const raw = new URL(req.url).searchParams.get("limit");
    const limit = raw === null ? 50 : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
      throw new ApiError(400, "invalid_query", "limit: must be a whole number from 1 to 500", [{ path: "limit", message: "must be a whole number from 1 to 500" }]);
    }
    return json({ runs: await loadRunList(limit, auth.orgId) });
  },
});
