import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { DEFAULT_ORG_ID, runs } from "../schema";

/** A queued run's place in its pool's line: 1 = next to get agents; `ahead` runs were queued before it. */
export interface QueuePlace {
  pool: string;
  position: number;
  ahead: number;
}

/**
 * The queued runs of an org, by id, with their place in their pool's line: first come first served
 * (creation time, then id), which is the order the hub admits them in (apps/hub runs/agent-line.ts).
 */
export async function queuePlaces(db: Db, orgId = DEFAULT_ORG_ID): Promise<Map<string, QueuePlace>> {
  const pool = sql<string>`coalesce(${runs.plan}->'agents'->>'pool', 'default')`;
  const rows = await db
    .select({ id: runs.id, pool })
    .from(runs)
    .where(and(eq(runs.orgId, orgId), eq(runs.status, "queued")))
    .orderBy(asc(runs.createdAt), asc(runs.id));
  const seen = new Map<string, number>();
  const places = new Map<string, QueuePlace>();
  for (const r of rows) {
    const ahead = seen.get(r.pool) ?? 0;
    seen.set(r.pool, ahead + 1);
    places.set(r.id, { pool: r.pool, position: ahead + 1, ahead });
  }
  return places;
}
