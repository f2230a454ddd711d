import { randomBytes } from "node:crypto";
import type { Plan } from "@volley/contracts";
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Db } from "../client";
import { newId } from "../ids";
import { auditEvents, members, orgs, runs, targetHosts, type OrgQuotas } from "../schema";

export type TargetHostRow = typeof targetHosts.$inferSelect;
export type AuditEventRow = typeof auditEvents.$inferSelect;

/** Adds a host to verify (or returns the org's existing record for it, keeping its token). */
export async function addTargetHost(db: Db, input: { orgId: string; host: string; createdBy: string | null }): Promise<TargetHostRow> {
  const [row] = await db
    .insert(targetHosts)
    .values({ id: newId("tgt"), orgId: input.orgId, host: input.host, token: `vv_${randomBytes(16).toString("hex")}`, createdBy: input.createdBy })
    .onConflictDoNothing()
    .returning();
  return row ?? (await getTargetHostByName(db, input.orgId, input.host))!;
}

export async function listTargetHosts(db: Db, orgId: string): Promise<TargetHostRow[]> {
  return db.select().from(targetHosts).where(eq(targetHosts.orgId, orgId)).orderBy(targetHosts.host);
}

export async function getTargetHost(db: Db, orgId: string, id: string): Promise<TargetHostRow | null> {
  const [row] = await db
    .select()
    .from(targetHosts)
    .where(and(eq(targetHosts.orgId, orgId), eq(targetHosts.id, id)));
  return row ?? null;
}

export async function getTargetHostByName(db: Db, orgId: string, host: string): Promise<TargetHostRow | null> {
  const [row] = await db
    .select()
    .from(targetHosts)
    .where(and(eq(targetHosts.orgId, orgId), eq(targetHosts.host, host)));
  return row ?? null;
}

/** Records the outcome of a check: verified now by `method`, or (null) no longer verified. */
export async function setTargetHostVerified(db: Db, id: string, method: "http" | "dns" | null): Promise<void> {
  await db
    .update(targetHosts)
    .set(method ? { verifiedAt: new Date(), method } : { verifiedAt: null, method: null })
    .where(eq(targetHosts.id, id));
}

export async function removeTargetHost(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db
    .delete(targetHosts)
    .where(and(eq(targetHosts.orgId, orgId), eq(targetHosts.id, id)))
    .returning({ id: targetHosts.id });
  return rows.length > 0;
}

/**
 * The org's own quotas (null: the install's defaults) and the runs queued or running now in it and
 * in every other org its owner(s) own (`orgCount` orgs in all): hosted quotas hold per owner, so
 * opening more organizations does not multiply them.
 */
export async function orgLoad(db: Db, orgId: string): Promise<{ quotas: OrgQuotas | null; inFlight: Plan[]; orgCount: number }> {
  const [org] = await db.select({ quotas: orgs.quotas }).from(orgs).where(eq(orgs.id, orgId));
  const owners = db
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.organizationId, orgId), eq(members.role, "owner")));
  const owned = await db
    .selectDistinct({ id: members.organizationId })
    .from(members)
    .where(and(eq(members.role, "owner"), inArray(members.userId, owners)));
  const group = [...new Set([orgId, ...owned.map((o) => o.id)])];
  const live = await db
    .select({ plan: runs.plan })
    .from(runs)
    .where(and(inArray(runs.orgId, group), inArray(runs.status, ["queued", "running"])));
  return { quotas: org?.quotas ?? null, inFlight: live.map((r) => r.plan), orgCount: group.length };
}

/** How many organizations the user owns (the limit on creating more is web's, VOLLEY_MAX_ORGS_PER_USER). */
/** Takes a transaction too (Pick), so a caller can count under its own lock. */
export async function countOwnedOrgs(db: Pick<Db, "selectDistinct">, userId: string): Promise<number> {
  const rows = await db
    .selectDistinct({ id: members.organizationId })
    .from(members)
    .where(and(eq(members.userId, userId), eq(members.role, "owner")));
  return rows.length;
}

export async function recordAudit(db: Db, event: Omit<typeof auditEvents.$inferInsert, "id" | "at">): Promise<void> {
  await db.insert(auditEvents).values(event);
}

export async function listAudit(db: Db, orgId: string, limit = 100): Promise<AuditEventRow[]> {
  return db.select().from(auditEvents).where(eq(auditEvents.orgId, orgId)).orderBy(desc(auditEvents.at), desc(auditEvents.id)).limit(limit);
}
