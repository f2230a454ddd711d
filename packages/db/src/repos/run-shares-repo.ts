import { and, desc, eq, isNull } from "drizzle-orm";
import type { Db } from "../client";
import { newId } from "../ids";
import { runShares } from "../schema";

export type RunShareRow = typeof runShares.$inferSelect;

export async function createRunShare(db: Db, input: { orgId: string; runId: string; createdBy: string | null }): Promise<RunShareRow> {
  const [row] = await db
    .insert(runShares)
    .values({ id: newId("shr"), ...input })
    .returning();
  return row!;
}

/** A live share link by id, of any org: the caller must check that the viewer is a member of `orgId`. */
export async function getLiveRunShare(db: Db, id: string): Promise<RunShareRow | null> {
  const [row] = await db
    .select()
    .from(runShares)
    .where(and(eq(runShares.id, id), isNull(runShares.revokedAt)));
  return row ?? null;
}

export async function listRunShares(db: Db, orgId: string, runId: string): Promise<RunShareRow[]> {
  return db
    .select()
    .from(runShares)
    .where(and(eq(runShares.orgId, orgId), eq(runShares.runId, runId)))
    .orderBy(desc(runShares.createdAt));
}

/** Revokes a live link of this org; false when there is none. */
export async function revokeRunShare(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db
    .update(runShares)
    .set({ revokedAt: new Date() })
    .where(and(eq(runShares.id, id), eq(runShares.orgId, orgId), isNull(runShares.revokedAt)))
    .returning({ id: runShares.id });
  return rows.length === 1;
}
