import { and, arrayContains, desc, eq, getTableColumns, gte, ilike, inArray, lt, notInArray, or, sql } from "drizzle-orm";
import { canMoveRun, FINAL_RUN_STATUSES, runStatusesBefore, type Plan, type RateChange, type RunStatus, type RunSummary } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { DEFAULT_ORG_ID, runs } from "../schema";
import { sealPlan } from "../plan-secrets-box";
import type { SecretKeys } from "../secret-box";

export type RunRow = typeof runs.$inferSelect;

/**
 * Writes a queued run. Its plan's target credentials are stored sealed under `secretsKeys`
 * (plan-secrets-box.ts); with `secrets` the plan is already in its stored form (a saved plan's
 * document and secrets column, copied as they are).
 */
export async function insertRun(
  db: Db,
  input: {
    plan: Plan;
    secretsKeys?: SecretKeys | null;
    secrets?: string | null;
    orgId?: string;
    planId?: string | null;
    planVersion?: number | null;
    scheduleId?: string | null;
  },
): Promise<RunRow> {
  const stored = input.secrets !== undefined ? { document: input.plan, secrets: input.secrets } : sealPlan(input.plan, null, input.secretsKeys ?? null);
  const [row] = await db
    .insert(runs)
    .values({
      id: newId("run"),
      orgId: input.orgId ?? DEFAULT_ORG_ID,
      planId: input.planId ?? null,
      planVersion: input.planId ? (input.planVersion ?? null) : null,
      scheduleId: input.scheduleId ?? null,
      name: input.plan.name,
      plan: stored.document,
      secrets: stored.secrets,
      status: "queued",
    })
    .returning();
  return row!;
}

export async function getRun(db: Db, id: string, orgId = DEFAULT_ORG_ID): Promise<RunRow | null> {
  const [row] = await db
    .select()
    .from(runs)
    .where(and(eq(runs.id, id), eq(runs.orgId, orgId)));
  return row ?? null;
}

/** A run of any org, by id: for the hub, which orchestrates every org's runs (web must use getRun with the caller's org). */
export async function getRunOfAnyOrg(db: Db, id: string): Promise<RunRow | null> {
  const [row] = await db.select().from(runs).where(eq(runs.id, id));
  return row ?? null;
}

export async function listRuns(db: Db, opts: { orgId?: string; limit?: number; offset?: number; status?: RunStatus; planId?: string } = {}): Promise<RunRow[]> {
  return db
    .select()
    .from(runs)
    .where(
      and(
        eq(runs.orgId, opts.orgId ?? DEFAULT_ORG_ID),
        opts.status ? eq(runs.status, opts.status) : undefined,
        opts.planId ? eq(runs.planId, opts.planId) : undefined,
      ),
    )
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(opts.limit ?? 50)
    .offset(opts.offset ?? 0);
}

/** Run-list filters, combined with AND: status, saved plan, text in the name or id, a tag, a creation window [from, to). */
export interface RunFilter {
  status?: RunStatus;
  planId?: string;
  q?: string;
  tag?: string;
  from?: Date;
  to?: Date;
}

function runFilter(f: RunFilter) {
  // ILIKE wildcards in the search text match themselves.
  const like = f.q ? `%${f.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  return [
    f.status ? eq(runs.status, f.status) : undefined,
    f.planId ? eq(runs.planId, f.planId) : undefined,
    like ? or(ilike(runs.name, like), ilike(runs.id, like)) : undefined,
    f.tag ? arrayContains(runs.tags, [f.tag]) : undefined,
    f.from ? gte(runs.createdAt, f.from) : undefined,
    f.to ? lt(runs.createdAt, f.to) : undefined,
  ];
}

/** A run row without its plan document (lists show names, statuses and summaries, never the plan). */
export type RunHead = Omit<RunRow, "plan">;
const { plan: _plan, ...headColumns } = getTableColumns(runs);

/**
 * One page of an org's runs, newest first, without their plans: at most `limit`, starting after
 * the run `after` (the previous page's last id) or skipping `offset`. `more` says whether runs
 * follow. Null when `after` names no run of the org.
 */
export async function listRunPage(
  db: Db,
  opts: { orgId: string; limit: number; offset?: number; after?: string } & RunFilter,
): Promise<{ rows: RunHead[]; more: boolean } | null> {
  if (opts.after !== undefined && !(await getRun(db, opts.after, opts.orgId))) return null;
  const rows = await db
    .select(headColumns)
    .from(runs)
    .where(
      and(
        eq(runs.orgId, opts.orgId),
        ...runFilter(opts),
        // Compared inside PostgreSQL: timestamps keep microseconds there that a JS Date would drop.
        opts.after !== undefined ? sql`(${runs.createdAt}, ${runs.id}) < (select r.created_at, r.id from runs r where r.id = ${opts.after})` : undefined,
      ),
    )
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(opts.limit + 1)
    .offset(opts.offset ?? 0);
  return { rows: rows.slice(0, opts.limit), more: rows.length > opts.limit };
}

/** queued → running (contracts RUN_LIFECYCLE); returns false if the run is no longer queued (aborted meanwhile, or taken by another hub). */
export async function markRunRunning(db: Db, id: string): Promise<boolean> {
  const rows = await db
    .update(runs)
    .set({ status: "running", startedAt: new Date() })
    .where(and(eq(runs.id, id), inArray(runs.status, runStatusesBefore("running"))))
    .returning({ id: runs.id });
  return rows.length === 1;
}

/** Appends a live rate change to a running run; returns every change so far, or null when the run is no longer running. */
export async function appendRateChange(db: Db, id: string, change: RateChange): Promise<RateChange[] | null> {
  const rows = await db
    .update(runs)
    .set({ rateChanges: sql`${runs.rateChanges} || ${JSON.stringify([change])}::jsonb` })
    .where(and(eq(runs.id, id), eq(runs.status, "running")))
    .returning({ rateChanges: runs.rateChanges });
  return rows[0]?.rateChanges ?? null;
}

/** Moves a run to a final status once, from a status RUN_LIFECYCLE allows; later calls (a second hub, a late abort) change nothing. */
export async function finishRun(
  db: Db,
  id: string,
  result: { status: RunStatus; reason?: string | null; summary?: RunSummary | null; startSkewMs?: number | null; startLateMs?: number | null },
): Promise<boolean> {
  const rows = await db
    .update(runs)
    .set({
      status: result.status,
      reason: result.reason ?? null,
      summary: result.summary ?? null,
      startSkewMs: result.startSkewMs ?? null,
      startLateMs: result.startLateMs ?? null,
      endedAt: new Date(),
    })
    .where(and(eq(runs.id, id), inArray(runs.status, runStatusesBefore(result.status)), notInArray(runs.status, [...FINAL_RUN_STATUSES])))
    .returning({ id: runs.id });
  return rows.length === 1;
}

/**
 * Rewrites a finished run's summary (and status and reason) after frames it was judged without
 * were stored; only while it still has the status `from`, so a concurrent restatement or a newer
 * write is never overwritten with an older view. The end time stays the run's.
 */
export async function restateRun(
  db: Db,
  id: string,
  from: RunStatus,
  result: { status: RunStatus; reason: string | null; summary: RunSummary },
): Promise<boolean> {
  // The same status (a new summary), or a move RUN_LIFECYCLE allows between final statuses (passed ↔ failed).
  if (result.status !== from && !canMoveRun(from, result.status)) return false;
  const rows = await db
    .update(runs)
    .set({ status: result.status, reason: result.reason, summary: result.summary })
    .where(and(eq(runs.id, id), eq(runs.status, from), inArray(runs.status, [...FINAL_RUN_STATUSES])))
    .returning({ id: runs.id });
  return rows.length === 1;
}

export async function listRunsByStatus(db: Db, statuses: RunStatus[]): Promise<RunRow[]> {
  return db.select().from(runs).where(inArray(runs.status, statuses));
}
