import { asc, eq } from "drizzle-orm";
import type { Plan } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { shards, type ShardStatus } from "../schema";

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

export async function updateShard(
  db: Db,
  id: string,
  patch: Partial<{ status: ShardStatus; agentId: string | null; error: string | null; frames: number; startedAt: Date; endedAt: Date }>,
): Promise<void> {
  await db.update(shards).set(patch).where(eq(shards.id, id));
}
