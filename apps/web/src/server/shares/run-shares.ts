import type { IntervalPoint, RunAnalysis, RunShare, RunWithMeta } from "@volley/contracts";
import { createRunShare, getLiveRunShare, getMembership, getRun, listMemberships, listRunShares, revokeRunShare, type RunShareRow } from "@volley/db";
import type { AuthContext } from "../auth/auth";
import { notFound } from "../http/errors";
import { getDb } from "../http/services";
import { loadRunAnalysis } from "../runs/run-analysis";
import { loadIntervals, loadRun } from "../runs/runs";

/**
 * Read-only links to a run, within its org. A link is no credential: it opens the run only for a
 * signed-in member of the run's org (any role, viewers included, whatever org they have active)
 * or an API token of that org; anyone else gets the same 404 as for a link that never existed.
 * Revoked links open nothing. Opening one changes nothing about the member's session: the run is
 * shown as it is shared (loadSharedRun), not by switching their active org.
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

/**
 * What the shared-run page shows a member: the run, its timeline and analysis read in the run's
 * own org, and that org's name; null when the link opens nothing for this member (as resolveShare).
 */
export async function loadSharedRun(
  id: string,
  userId: string,
): Promise<{ orgName: string; run: RunWithMeta; intervals: IntervalPoint[]; analysis: RunAnalysis } | null> {
  const target = await resolveShare(id, { userId });
  if (!target) return null;
  const [run, intervals, analysis, memberships] = await Promise.all([
    loadRun(target.runId, target.orgId),
    loadIntervals(target.runId, target.orgId),
    loadRunAnalysis(target.runId, target.orgId),
    listMemberships(getDb(), userId),
  ]);
  return { orgName: memberships.find((m) => m.orgId === target.orgId)?.orgName ?? target.orgId, run, intervals, analysis };
}
