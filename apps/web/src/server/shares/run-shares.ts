import type { RunShare } from "@volley/contracts";
import { createRunShare, getLiveRunShare, getMembership, getRun, listRunShares, revokeRunShare, type RunShareRow } from "@volley/db";
import type { AuthContext } from "../auth/auth";
import { notFound } from "../http/errors";
import { getDb } from "../http/services";

/**
 * Read-only links to a run, within its org. A link is no credential: it opens the run only for a
 * signed-in member of the run's org (any role, viewers included, whatever org they have active)
 * or an API token of that org; anyone else gets the same 404 as for a link that never existed.
 * Revoked links open nothing.
 */

export const sharePath = (id: string) => `/share/${id}`;

function toShare(row: RunShareRow): RunShare {
  return { id: row.id, runId: row.runId, path: sharePath(row.id), createdAt: row.createdAt.toISOString(), revokedAt: row.revokedAt?.toISOString() ?? null };
}

export async function shareRun(auth: AuthContext, runId: string): Promise<RunShare> {
  const db = getDb();
  if (!(await getRun(db, runId, auth.orgId))) throw notFound(`run ${runId}`);
  const createdBy = auth.actor.kind === "user" ? auth.actor.userId : auth.actor.kind === "token" ? auth.actor.tokenId : null;
  return toShare(await createRunShare(db, { orgId: auth.orgId, runId, createdBy }));
}

export async function listShares(orgId: string, runId: string): Promise<RunShare[]> {
  const db = getDb();
  if (!(await getRun(db, runId, orgId))) throw notFound(`run ${runId}`);
  return (await listRunShares(db, orgId, runId)).map(toShare);
}

export async function revokeShare(orgId: string, id: string): Promise<void> {
  if (!(await revokeRunShare(getDb(), orgId, id))) throw notFound(`share link ${id}`);
}

/**
 * What a share link opens for this viewer: the run's org and id, or null (unknown, revoked, or
 * the viewer is not of the run's org; the caller answers all three alike).
 */
export async function resolveShare(id: string, viewer: { userId: string } | { tokenOrgId: string }): Promise<{ orgId: string; runId: string } | null> {
  const db = getDb();
  const share = await getLiveRunShare(db, id);
  if (!share) return null;
  const member = "userId" in viewer ? (await getMembership(db, viewer.userId, share.orgId)) !== null : viewer.tokenOrgId === share.orgId;
  return member ? { orgId: share.orgId, runId: share.runId } : null;
}
