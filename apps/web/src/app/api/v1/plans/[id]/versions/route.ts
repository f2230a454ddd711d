import { apiHandler, json } from "@/server/http/api-handler";
import { loadPlanVersions, seesPlanSecrets } from "@/server/plans/plans";

/** GET /api/v1/plans/{id}/versions → {"versions": [...]}, oldest first. */
export const GET = apiHandler({
  permission: "plans:read",
  handler: async ({ params, auth }) => json({ versions: await loadPlanVersions(auth.orgId, params.id ?? "", seesPlanSecrets(auth)) }),
});
