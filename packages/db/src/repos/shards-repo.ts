import { and, asc, eq, inArray } from "drizzle-orm";
import { shardStatusesBefore, type Plan, type ShardStatus } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { shards } from "../schema";
import { sealPlan } from "../plan-secrets-box";
import type { SecretKeys } from "../secret-box";

export type ShardRow = typeof shards.$inferSelect;

/** Writes a run's shards; each plan's target credentials are stored sealed under `secretsKeys` (plan-secrets-box.ts). */
export async function insertShards(db: Db, runId: string, plans: Plan[], secretsKeys: SecretKeys | null = null): Promise<ShardRow[]> {
  return db
    .insert(shards)
    .values(
      plans.map((plan, index) => {
        const { document, secrets } = sealPlan(plan, null, secretsKeys);
        return { id: newId("shd"), runId, index, count: plans.length, plan: document, secrets };
      }),
    )
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
