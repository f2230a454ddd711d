import { and, asc, eq, gte, inArray, isNotNull, isNull, lt, sql } from "drizzle-orm";
import { FINAL_RUN_STATUSES, type IntervalPoint, type RunAnalysis, type RunSummary } from "@volley/contracts";
import type { Db } from "../client";
import { runIntervals, runMeters, runPoints, runs } from "../schema";
import type { IntervalRow } from "./intervals-repo";

export type RunPointRow = typeof runPoints.$inferSelect;
export type RunMeterRow = typeof runMeters.$inferSelect;

/** Writes merged seconds (a second merged again with a later frame replaces its row). */
export async function upsertRunPoints(
  db: Db,
  runId: string,
  points: Array<{ point: IntervalPoint; histograms: Record<string, string>; frames: number }>,
): Promise<void> {
  if (points.length === 0) return;
  await db
    .insert(runPoints)
    .values(points.map((p) => ({ runId, index: p.point.index, point: p.point, histograms: p.histograms, frames: p.frames })))
    .onConflictDoUpdate({
      target: [runPoints.runId, runPoints.index],
      set: { point: sql`excluded.point`, histograms: sql`excluded.histograms`, frames: sql`excluded.frames` },
    });
}

/** The run's merged timeline, in order. */
export async function listRunPoints(db: Db, runId: string): Promise<IntervalPoint[]> {
  const rows = await db.select({ point: runPoints.point }).from(runPoints).where(eq(runPoints.runId, runId)).orderBy(asc(runPoints.index));
  return rows.map((r) => r.point);
}

/** Merged rows with their histograms (tests, exact re-merges). */
export async function listRunPointRows(db: Db, runId: string): Promise<RunPointRow[]> {
  return db.select().from(runPoints).where(eq(runPoints.runId, runId)).orderBy(asc(runPoints.index));
}

/** Saves the meter's result; `analysis` undefined keeps the stored one (it is refreshed less often). */
export async function saveRunMeter(db: Db, runId: string, m: { frames: number; summary: RunSummary | null; analysis?: RunAnalysis }): Promise<void> {
  const set = { frames: m.frames, summary: m.summary, updatedAt: new Date(), ...(m.analysis ? { analysis: m.analysis } : {}) };
  await db
    .insert(runMeters)
    .values({ runId, ...set })
    .onConflictDoUpdate({ target: runMeters.runId, set });
}

export async function getRunMeter(db: Db, runId: string): Promise<RunMeterRow | null> {
  const [row] = await db.select().from(runMeters).where(eq(runMeters.runId, runId));
  return row ?? null;
}

/** The meter's row without its analysis (spectra and per agent: the bulk of it), for readers of the summary. */
export async function getRunMeterSummary(db: Db, runId: string): Promise<Omit<RunMeterRow, "analysis"> | null> {
  const [row] = await db
    .select({
      runId: runMeters.runId,
      frames: runMeters.frames,
      summary: runMeters.summary,
      updatedAt: runMeters.updatedAt,
      framesDeletedAt: runMeters.framesDeletedAt,
    })
    .from(runMeters)
    .where(eq(runMeters.runId, runId));
  return row ?? null;
}

/** Frames of seconds [from, to), by second then shard: a replay reads a run a slice at a time, never all of it at once. */
export async function listFramesBetween(db: Db, runId: string, from: number, to: number): Promise<IntervalRow[]> {
  return db
    .select()
    .from(runIntervals)
    .where(and(eq(runIntervals.runId, runId), gte(runIntervals.index, from), lt(runIntervals.index, to)))
    .orderBy(asc(runIntervals.index), asc(runIntervals.shardId));
}

/** The highest second any stored frame of the run belongs to (-1: none). */
export async function lastFrameIndex(db: Db, runId: string): Promise<number> {
  const [row] = await db
    .select({ max: sql<number | null>`max(${runIntervals.index})` })
    .from(runIntervals)
    .where(eq(runIntervals.runId, runId));
  return row?.max ?? -1;
}

/** The (shard, seq) and id of every stored frame of the run: cheap rows, to find frames a reader has not folded. */
export async function listFrameKeys(db: Db, runId: string): Promise<Array<{ id: number; shardId: string; seq: number }>> {
  return db.select({ id: runIntervals.id, shardId: runIntervals.shardId, seq: runIntervals.seq }).from(runIntervals).where(eq(runIntervals.runId, runId));
}

/**
 * The (shard, seq) and id of the run's stored frames with an id above `afterId`, and the bounds of the
 * snapshot that read them (transaction ids as xid8, no wraparound): every transaction below `xmin` had
 * ended when they were read, and every one that had taken a transaction id was below `xmax`. The run
 * meter's reconcile reads only past its settled watermark and moves it by these bounds.
 */
export async function listFrameKeysAfter(
  db: Db,
  runId: string,
  afterId: number,
): Promise<{ keys: Array<{ id: number; shardId: string; seq: number }>; xmin: bigint; xmax: bigint }> {
  // One statement, so the keys and the snapshot bounds are of the same snapshot.
  const res = await db.execute<{ xmin: string; xmax: string; id: string | null; shard_id: string | null; seq: number | null }>(sql`
    SELECT pg_snapshot_xmin(s.snap)::text AS xmin, pg_snapshot_xmax(s.snap)::text AS xmax, f.id, f.shard_id, f.seq
    FROM (SELECT pg_current_snapshot() AS snap) s
    LEFT JOIN LATERAL (
      SELECT ${runIntervals.id} AS id, ${runIntervals.shardId} AS shard_id, ${runIntervals.seq} AS seq FROM ${runIntervals}
      WHERE ${runIntervals.runId} = ${runId} AND ${runIntervals.id} > ${afterId}
    ) f ON true`);
  const [first] = res.rows;
  return {
    keys: res.rows.flatMap((r) => (r.id === null ? [] : [{ id: Number(r.id), shardId: r.shard_id!, seq: r.seq! }])),
    xmin: BigInt(first!.xmin),
    xmax: BigInt(first!.xmax),
  };
}

export async function listFramesById(db: Db, ids: number[]): Promise<IntervalRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(runIntervals).where(inArray(runIntervals.id, ids)).orderBy(asc(runIntervals.id));
}

const finished = inArray(runs.status, [...FINAL_RUN_STATUSES]);

/**
 * Retention, first tier: deletes the raw frames of runs that ended before `before` and whose merged
 * rows exist (a run_meters row), at most `limit` runs per call; marks them. The run page, the API's
 * summary, timeline and analysis read the merged rows, so they answer as before.
 * Returns the runs pruned and the frames deleted.
 */
export async function pruneRunFrames(db: Db, before: Date, limit = 50): Promise<{ runs: string[]; frames: number }> {
  const due = await db
    .select({ id: runs.id })
    .from(runs)
    .innerJoin(runMeters, eq(runMeters.runId, runs.id))
    .where(and(finished, isNotNull(runs.endedAt), lt(runs.endedAt, before), isNull(runMeters.framesDeletedAt)))
    .limit(limit);
  const ids = due.map((r) => r.id);
  if (ids.length === 0) return { runs: [], frames: 0 };
  return db.transaction(async (tx) => {
    const deleted = await tx.delete(runIntervals).where(inArray(runIntervals.runId, ids)).returning({ id: runIntervals.id });
    await tx.update(runMeters).set({ framesDeletedAt: new Date() }).where(inArray(runMeters.runId, ids));
    return { runs: ids, frames: deleted.length };
  });
}

/** Retention, second tier: deletes whole runs (shards, frames, merged rows cascade) that ended before `before`, at most `limit` per call. */
export async function deleteRunsEndedBefore(db: Db, before: Date, limit = 100): Promise<string[]> {
  const due = await db
    .select({ id: runs.id })
    .from(runs)
    .where(and(finished, isNotNull(runs.endedAt), lt(runs.endedAt, before)))
    .limit(limit);
  if (due.length === 0) return [];
  const rows = await db
    .delete(runs)
    .where(
      inArray(
        runs.id,
        due.map((r) => r.id),
      ),
    )
    .returning({ id: runs.id });
  return rows.map((r) => r.id);
}

/** The newest stored frame's id for the run (0: none): where a reader that replays the rest starts its cursor. */
export async function maxFrameId(db: Db, runId: string): Promise<number> {
  const [row] = await db
    .select({ max: sql<string | null>`max(${runIntervals.id})` })
    .from(runIntervals)
    .where(eq(runIntervals.runId, runId));
  return row?.max == null ? 0 : Number(row.max);
}
