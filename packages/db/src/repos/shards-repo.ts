import { and, asc, eq, inArray } from "drizzle-orm";
import { shardStatusesBefore, type Plan, type ShardStatus } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { shards } from "../schema";

export type ShardRow = typeof shards.$inferSelect;

export async function insertShards(db: Db, runId: string, plans: Plan[]): Promise<ShardRow[]> {
  return db
    .insert(shards)
    .values(plans.map((plan, index) => ({ id: newId("shd"), runId, index, count: plans.length, plan })))
    .returning();
}

export async function listShards(db: Db, runId: string): Promise<ShardRow[]> {
  return db.select().from(shards).where(eq(shards.runId, runId)).orderBy(asc(shards.index));
}

/**
 * Updates a shard's row. A patch with a status is written only when the shard may move there from
 * where it is (contracts SHARD_LIFECYCLE): an ended shard keeps its first end, a pending one is never
 * marked running. Returns whether the row changed.
 */
export async function updateShard(
  db: Db,
  id: string,
  patch: Partial<{ status: ShardStatus; agentId: string | null; error: string | null; frames: number; startedAt: Date; endedAt: Date }>,
): Promise<boolean> {
  const legal = patch.status ? inArray(shards.status, shardStatusesBefore(patch.status)) : undefined;
  const rows = await db
    .update(shards)
    .set(patch)
    .where(and(eq(shards.id, id), legal))
    .returning({ id: shards.id });
  return rows.length === 1;
}
