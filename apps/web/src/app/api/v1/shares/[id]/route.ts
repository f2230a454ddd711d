import { apiHandler, json } from "@/server/http/api-handler";
import { notFound } from "@/server/http/errors";
import { loadRun } from "@/server/runs/runs";
import { resolveShare, revokeShare } from "@/server/shares/run-shares";

/**
 * GET /api/v1/shares/{id} → the shared run, for a signed-in member of the run's org (whatever org
 * they have active) or an API token of it; 404 for everyone else, as for a revoked or unknown link.
 */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ params, auth }) => {
    const id = params.id ?? "";
    const viewer = auth.actor.kind === "user" ? { userId: auth.actor.userId } : { tokenOrgId: auth.orgId };
    const target = await resolveShare(id, viewer);
    if (!target) throw notFound(`share link ${id}`);
    return json(await loadRun(target.runId, target.orgId));
  },
});

/** DELETE /api/v1/shares/{id} → 204: the link opens nothing from now on. */
export const DELETE = apiHandler({
  permission: "runs:write",
  handler: async ({ params, auth }) => {
    await revokeShare(auth.orgId, params.id ?? "");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});
