import { eq, sql } from "drizzle-orm";
import type { MetricsExport, PutMetricsExportBody } from "@volley/contracts";
import type { Db } from "../client";
import { agents, metricsExports, runs } from "../schema";
import { openSecret, sealSecret, type SecretKeys } from "../secret-box";

/** What the hub pushes with: the Authorization header opened. */
export interface MetricsExportConfig {
  url: string;
  authorization: string | null;
  labels: Record<string, string>;
  enabled: boolean;
}

/** The org's export as the API shows it: the Authorization header never leaves the database. */
export async function getMetricsExport(db: Db, orgId: string): Promise<MetricsExport | null> {
  const [row] = await db.select().from(metricsExports).where(eq(metricsExports.orgId, orgId));
  if (!row) return null;
  return {
    kind: row.kind,
    url: row.url,
    hasAuthorization: row.authorization !== null,
    labels: row.labels,
    enabled: row.enabled,
    updatedAt: row.updatedAt.toISOString(),
    lastPushAt: row.lastPushAt?.toISOString() ?? null,
    lastStatus: row.lastStatus,
    lastError: row.lastError,
  };
}

/** Sets the org's export; an `authorization` left out keeps the stored one, null removes it. */
export async function putMetricsExport(db: Db, orgId: string, body: PutMetricsExportBody, keys: SecretKeys | null): Promise<MetricsExport> {
  const seal = (v: string) => (keys ? sealSecret(v, keys) : v);
  const values = {
    kind: body.kind,
    url: body.url,
    labels: body.labels,
    enabled: body.enabled,
    updatedAt: new Date(),
    lastPushAt: null,
    lastStatus: null,
    lastError: null,
  };
  const auth = body.authorization === undefined ? {} : { authorization: body.authorization === null ? null : seal(body.authorization) };
  await db
    .insert(metricsExports)
    .values({ orgId, ...values, authorization: body.authorization ? seal(body.authorization) : null })
    .onConflictDoUpdate({ target: metricsExports.orgId, set: { ...values, ...auth } });
  return (await getMetricsExport(db, orgId))!;
}

export async function deleteMetricsExport(db: Db, orgId: string): Promise<boolean> {
  const deleted = await db.delete(metricsExports).where(eq(metricsExports.orgId, orgId)).returning({ orgId: metricsExports.orgId });
  return deleted.length > 0;
}

/** For the hub: the org's export with its Authorization header opened; null when none is set. */
export async function loadMetricsExport(db: Db, orgId: string, keys: SecretKeys | null): Promise<MetricsExportConfig | null> {
  const [row] = await db.select().from(metricsExports).where(eq(metricsExports.orgId, orgId));
  if (!row) return null;
  const authorization = row.authorization === null ? null : keys ? openSecret(row.authorization, keys).plain : row.authorization;
  return { url: row.url, authorization, labels: row.labels, enabled: row.enabled };
}

export async function recordMetricsExportPush(db: Db, orgId: string, outcome: { status: number; error: string | null }): Promise<void> {
  await db.update(metricsExports).set({ lastPushAt: new Date(), lastStatus: outcome.status, lastError: outcome.error }).where(eq(metricsExports.orgId, orgId));
}

/** Runs on the install by status (every org): the hub's /metrics. */
export async function countRunsByStatus(db: Db): Promise<{ status: string; count: number }[]> {
  return db.select({ status: runs.status, count: sql<number>`count(*)::int` }).from(runs).groupBy(runs.status);
}

/** Enrolled agents by stored status (every org): the hub's /metrics. */
export async function countAgentsByStatus(db: Db): Promise<{ status: string; count: number }[]> {
  return db.select({ status: agents.status, count: sql<number>`count(*)::int` }).from(agents).groupBy(agents.status);
}
