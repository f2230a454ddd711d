import { pageQuerySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { loadAudit } from "@/server/targets/targets";

/** GET /api/v1/audit[?limit] → {"events": [...]}, newest first: who ran what against which host. */
export const GET = apiHandler({
  permission: "org:admin",
  query: pageQuerySchema,
  handler: async ({ auth, query }) => json({ events: await loadAudit(auth.orgId, query.limit) }),
});
