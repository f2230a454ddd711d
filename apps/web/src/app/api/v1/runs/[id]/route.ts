import { metaPatchBodySchema } from "@volley/contracts";
import { updateRunMeta } from "@/server/runs/run-meta";
import { apiHandler, json } from "@/server/http/api-handler";
import { loadRun } from "@/server/runs/runs";
import { seesPlanSecrets } from "@/server/plans/plans";

/** GET /api/v1/runs/{id} → the run (runSchema); the summary is live while it runs; its plan's target credentials redacted for viewers and read tokens. */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ params, auth }) => json(await loadRun(params.id ?? "", auth.orgId, seesPlanSecrets(auth))),
});

/** PATCH /api/v1/runs/{id} {"tags"?, "notes"?} → the run: only the fields sent change. */
export const PATCH = apiHandler({
  permission: "runs:write",
  body: metaPatchBodySchema,
  handler: async ({ params, body, auth }) => json(await updateRunMeta(auth.orgId, params.id ?? "", body)),
});
