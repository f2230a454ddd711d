import { flowAbsoluteUrls, literalHost, type AuditEvent, type Plan, type TargetHost } from "@volley/contracts";
import {
  addTargetHost,
  orgLoad,
  getTargetHost,
  getTargetHostByName,
  listAudit,
  listTargetHosts,
  recordAudit,
  removeTargetHost,
  setTargetHostVerified,
  type TargetHostRow,
} from "@volley/db";
import { hostedQuotas, volleyMode } from "@/env";
import type { AuthContext } from "../auth/auth";
import { ApiError, notFound } from "../http/errors";
import { getDb } from "../http/services";
import { assertPublicAddresses, assertWithinQuotas, checkTarget, resolveTarget } from "./target-policy";
import { checkProof, proofInstructions, type ProofOptions } from "./target-verification";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toTargetHost(row: TargetHostRow): TargetHost {
  return {
    id: row.id,
    host: row.host,
    token: row.token,
    verified: row.verifiedAt !== null,
    verifiedAt: iso(row.verifiedAt),
    method: row.method === "http" || row.method === "dns" ? row.method : null,
    instructions: proofInstructions(row.host, row.token),
    createdAt: row.createdAt.toISOString(),
  };
}

export function actorOf(auth: AuthContext): string {
  return auth.actor.kind === "user" ? `user:${auth.actor.userId}` : auth.actor.kind === "token" ? `token:${auth.actor.tokenId}` : "anonymous";
}

export async function addHost(auth: AuthContext, host: string): Promise<TargetHost> {
  return toTargetHost(await addTargetHost(getDb(), { orgId: auth.orgId, host, createdBy: auth.actor.kind === "user" ? auth.actor.userId : null }));
}

export async function listHosts(orgId: string): Promise<TargetHost[]> {
  return (await listTargetHosts(getDb(), orgId)).map(toTargetHost);
}

export async function removeHost(orgId: string, id: string): Promise<void> {
  if (!(await removeTargetHost(getDb(), orgId, id))) throw notFound(`target ${id}`);
}

/** Checks the owner's proof now and records the outcome. In hosted mode the host must resolve to public addresses first. */
export async function verifyHost(orgId: string, id: string, opts?: ProofOptions): Promise<TargetHost> {
  const db = getDb();
  const row = await getTargetHost(db, orgId, id);
  if (!row) throw notFound(`target ${id}`);
  if (volleyMode() === "hosted") assertPublicAddresses(row.host, await resolveTarget(row.host));
  const method = await checkProof(row.host, row.token, opts);
  await setTargetHostVerified(db, row.id, method);
  return toTargetHost((await getTargetHost(db, orgId, id))!);
}

/**
 * Everything a run must pass before it is queued: the target policy (allowlist, or public
 * addresses and quotas when hosted), in hosted mode the host's proof re-checked now, and an audit
 * record of who ran it against what.
 */
export async function admitRun(
  auth: Pick<AuthContext, "orgId"> & Partial<Pick<AuthContext, "actor">>,
  plan: Plan,
): Promise<{ record(runId: string): Promise<void> }> {
  const { host, addresses, flowHosts } = await checkTarget(plan);
  if (volleyMode() === "hosted") {
    const db = getDb();
    const { quotas, inFlight, orgCount } = await orgLoad(db, auth.orgId);
    assertWithinQuotas(plan, { ...hostedQuotas(), ...quotas }, inFlight, orgCount);
    // Every host the run reaches is the org's own: target.url's and each host a flow request names.
    const fieldOf = (h: string) => (h === host ? "plan.target.url" : (flowAbsoluteUrls(plan).find((u) => literalHost(u.url) === h)?.field ?? "plan.flow"));
    for (const h of [host, ...flowHosts]) {
      const field = fieldOf(h);
      const row = await getTargetHostByName(db, auth.orgId, h);
      const how = `add it with POST /api/v1/targets {"host":"${h}"} and serve the token it gives you (or publish it as a TXT record), then POST /api/v1/targets/{id}/verify`;
      if (!row)
        throw new ApiError(403, "target_unverified", `${h} is not a verified target of this organization; ${how}`, [
          { path: field, message: `${h} is not verified` },
        ]);
      const method = await checkProof(row.host, row.token);
      await setTargetHostVerified(db, row.id, method);
      if (!method)
        throw new ApiError(
          403,
          "target_unverified",
          `the ownership proof for ${h} is no longer there (checked just now); ${proofInstructions(h, row.token).http}, or ${proofInstructions(h, row.token).dns}`,
          [{ path: field, message: `${h}'s proof is gone` }],
        );
    }
  }
  const actor = auth.actor ? actorOf(auth as AuthContext) : "anonymous";
  return { record: (runId) => recordAudit(getDb(), { orgId: auth.orgId, actor, action: "run.start", runId, targetHost: host, addresses }) };
}

export async function loadAudit(orgId: string, limit: number): Promise<AuditEvent[]> {
  return (await listAudit(getDb(), orgId, limit)).map((e) => ({
    id: e.id,
    actor: e.actor,
    action: e.action,
    runId: e.runId,
    targetHost: e.targetHost,
    addresses: e.addresses,
    at: e.at.toISOString(),
  }));
}
