import { admitPlan, assertPublicAddresses, checkProof, proofInstructions, resolveTarget, type ProofOptions } from "@volley/admission";
import type { AuditEvent, Plan, TargetHost } from "@volley/contracts";
import { addTargetHost, getTargetHost, listAudit, listTargetHosts, recordAudit, removeTargetHost, setTargetHostVerified, type TargetHostRow } from "@volley/db";
import { targetPolicy, volleyMode } from "@/env";
import type { AuthContext } from "../auth/auth";
import { notFound } from "../http/errors";
import { getDb } from "../http/services";

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
 * Everything a run must pass before it is queued (@volley/admission admitPlan, which the hub runs
 * too when a schedule fires), and an audit record of who ran it against what.
 */
export async function admitRun(
  auth: Pick<AuthContext, "orgId"> & Partial<Pick<AuthContext, "actor">>,
  plan: Plan,
): Promise<{ record(runId: string): Promise<void> }> {
  const { host, addresses } = await admitPlan(getDb(), auth.orgId, plan, targetPolicy());
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
