import { apiHandler, json } from "@/server/http/api-handler";
import { listShares, shareRun } from "@/server/shares/run-shares";

/**
 * POST /api/v1/runs/{id}/shares → 201 {"share"}: a read-only link to the run for the members of its
 * org (any role); it opens nothing for anyone else. Any member who can read the run may share it.
 */
export const POST = apiHandler({
  permission: "runs:read",
  handler: async ({ params, auth }) => json({ share: await shareRun(auth, params.id ?? "") }, 201),
});

/** GET /api/v1/runs/{id}/shares → {"shares": [...]}, newest first, revoked ones included. */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ params, auth }) => json({ shares: await listShares(auth.orgId, params.id ?? "") }),
});
