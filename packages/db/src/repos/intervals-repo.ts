import { and, asc, count, eq, gt, inArray, lte, sql } from "drizzle-orm";
import type { IntervalFrame } from "@volley/contracts";
import type { Db } from "../client";
import { runIntervals } from "../schema";

export type IntervalRow = typeof runIntervals.$inferSelect;

/** Stores frames; a frame delivered twice (same shard and seq) is stored once. Returns how many were new. */
export async function insertFrames(db: Db, frames: IntervalFrame[]): Promise<number> {
  if (frames.length === 0) return 0;
  // The whole batch as one jsonb parameter, unpacked by PostgreSQL: the hub stores a hundred frames
  // a second per hundred agents, and binding 15 parameters per row through the query builder cost
  // more CPU than anything else in storing them (bench/hub-aggregation.ts). JSON null is SQL NULL.
  const batch = JSON.stringify(
    frames.map((f) => ({
      run_id: f.runId,
      shard_id: f.shardId,
      agent_id: f.agentId,
      seq: f.seq,
      index: f.index,
      started_at: f.startedAt,
      duration_ms: f.durationMs,
      warmup: f.warmup,
      counters: f.counters,
      histograms: f.histograms,
      health: f.health,
      active_ms: f.activeMs ?? null,
      stage: f.stage ?? null,
      step: f.step ?? null,
      samples: f.samples?.length ? f.samples : null,
    })),
  );
  const stored = await db.execute(sql`
    INSERT INTO ${runIntervals} (run_id, shard_id, agent_id, seq, "index", started_at, duration_ms, warmup, counters, histograms, health, active_ms, stage, step, samples)
    SELECT run_id, shard_id, agent_id, seq, "index", started_at, duration_ms, warmup, counters, histograms, health, active_ms, stage, step, samples
    FROM jsonb_to_recordset(${batch}::jsonb) AS f(
      run_id text, shard_id text, agent_id text, seq integer, "index" integer, started_at double precision, duration_ms double precision,
      warmup boolean, counters jsonb, histograms jsonb, health jsonb, active_ms double precision, stage integer, step jsonb, samples jsonb)
    ON CONFLICT (shard_id, seq) DO NOTHING`);
  return stored.rowCount ?? 0;
}

export async function listFrames(db: Db, runId: string): Promise<IntervalRow[]> {
  return db.select().from(runIntervals).where(eq(runIntervals.runId, runId)).orderBy(asc(runIntervals.index), asc(runIntervals.shardId));
}

/** Stored frames per shard of a run, so the hub can tell when everything an agent reported has landed. */
export async function countFramesByShard(db: Db, runId: string): Promise<Record<string, number>> {
  const rows = await db
    .select({ shardId: runIntervals.shardId, n: count() })
    .from(runIntervals)
    .where(eq(runIntervals.runId, runId))
    .groupBy(runIntervals.shardId);
  return Object.fromEntries(rows.map((r) => [r.shardId, r.n]));
}

/** Frames stored after `afterId` (at most `limit`), oldest first: what a reader that keeps its own merged state has not seen. */
export async function listFramesAfter(db: Db, runId: string, afterId: number, limit = 5000): Promise<IntervalRow[]> {
  return db
    .select()
    .from(runIntervals)
    .where(and(eq(runIntervals.runId, runId), gt(runIntervals.id, afterId)))
    .orderBy(asc(runIntervals.id))
    .limit(limit);
}

/** Every frame of the given seconds stored up to `upToId`, to rebuild those seconds' merged state. */
export async function listFramesAtIndexes(db: Db, runId: string, indexes: number[], upToId: number): Promise<IntervalRow[]> {
  if (indexes.length === 0) return [];
  return db
    .select()
    .from(runIntervals)
    .where(and(eq(runIntervals.runId, runId), inArray(runIntervals.index, indexes), lte(runIntervals.id, upToId)))
    .orderBy(asc(runIntervals.id));
}

// The run meter's merged rows live beside the raw frames they are made of.
export * from "./run-meter-repo";
