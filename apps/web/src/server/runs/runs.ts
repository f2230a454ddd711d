import {
  abortRequestSchema,
  connectionsControlRefusal,
  FINAL_RUN_STATUSES,
  planRate,
  planTiming,
  RATE_CHANGE_LEAD_MS,
  rateChangeScale,
  rateControlRefusal,
  rateRequestSchema,
  type RateChange,
  type RateChangeBody,
  type RateChangeResponse,
  REDIS_KEYS,
  type IntervalPoint,
  type Plan,
  type PreflightWarning,
  type Run,
  type RunSummary,
  type RunWithMeta,
  runNotQueuedReason,
} from "@volley/contracts";
import {
  appendRateChange,
  finishRun,
  getPlan,
  getRun,
  insertRun,
  listBaselineRunIds,
  listRunPage,
  openPlan,
  queuePlaces,
  redactedPlan,
  DEFAULT_ORG_ID,
  type RunFilter,
  type RunRow,
} from "@volley/db";
import { enqueue, runJob } from "@volley/queue";
import type { AuthContext } from "../auth/auth";
import { admitRun } from "../targets/targets";
import { admitToPool } from "./preflight";
import { runSummaryOf, runTimelineOf } from "./run-measurements";
import type { AbortResponse, RunListItem } from "@/lib/types";
import { ApiError, notFound, unknownCursor } from "../http/errors";
import { getLogger } from "../http/log";
import { getDb, getRedis, getRunsQueue, withRedisDeadline } from "../http/services";
import { secretsKeys } from "@/env";

/**
 * What web does with runs. Used by the API route handlers and by the server-rendered pages, so
 * both see exactly the same data. Every function is scoped to an org (the default one for now).
 */

export const isFinal = (status: Run["status"]) => FINAL_RUN_STATUSES.includes(status);
const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The run's plan with its target credentials (reveal: for callers who may change plans) or with them redacted. */
function runPlan(row: RunRow, reveal: boolean): Plan {
  const stored = { document: row.plan, source: null, secrets: row.secrets };
  return reveal ? openPlan(stored, secretsKeys()).plan : redactedPlan(stored).document;
}

function toRun(row: RunRow, summary: RunSummary | null, baseline = false, reveal = false): RunWithMeta {
  return {
    id: row.id,
    status: row.status,
    reason: row.reason,
    name: row.name,
    plan: runPlan(row, reveal),
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    endedAt: iso(row.endedAt),
    summary,
    planId: row.planId,
    planVersion: row.planVersion,
    tags: row.tags,
    notes: row.notes,
    baseline,
    scheduleId: row.scheduleId,
    rateChanges: row.rateChanges,
  };
}

/** Writes the run row (queued) and puts `runJob {runId}` on the runs queue for a hub to execute. */
export async function createRun(
  plan: Plan,
  orgId = DEFAULT_ORG_ID,
  planId: string | null = null,
  actor?: AuthContext["actor"],
  planVersion: number | null = null,
): Promise<{ id: string; warnings: PreflightWarning[] }> {
  const db = getDb();
  const admitted = await admitRun({ orgId, actor }, plan);
  // 409 at once when the pool lacks the agents asked for (the run could only wait); else what may saturate them.
  const warnings = await admitToPool(plan, orgId);
  const queue = getRunsQueue();
  // Its target credentials are stored sealed (db plan-secrets-box); the hub opens them for the agents.
  const row = await insertRun(db, { plan, secretsKeys: secretsKeys(), orgId, planId, planVersion });
  await admitted.record(row.id); // before it can run: every run has its audit line
  try {
    // jobId = run id: enqueuing the same run twice is a no-op in BullMQ.
    await withRedisDeadline("queue the run", enqueue(queue, runJob, { runId: row.id }, { jobId: row.id }));
  } catch (err) {
    // The driver's text is for the operator's log; the run and the answer say what happened and what to do.
    getLogger().error({ runId: row.id, err }, "run could not be queued");
    const reason = runNotQueuedReason();
    // The row must not sit in `queued` forever when no job will ever run it.
    await finishRun(db, row.id, { status: "errored", reason }).catch(() => {});
    throw new ApiError(503, "unavailable", `the run ${reason}`);
  }
  getLogger().info({ runId: row.id, name: plan.name, warnings: warnings.map((w) => w.code) }, "run queued");
  return { id: row.id, warnings };
}

/**
 * One run. A finished run returns its stored summary; a running one the live summary its hub's run
 * meter keeps (null before the first frame). Its plan's target credentials are redacted unless
 * `reveal` (callers who may change plans, see seesPlanSecrets).
 */
export async function loadRun(id: string, orgId = DEFAULT_ORG_ID, reveal = false): Promise<RunWithMeta> {
  const db = getDb();
  const row = await getRun(db, id, orgId);
  if (!row) throw notFound(`run ${id}`);
  const summary = await runSummaryOf(db, row);
  const plan = row.planId ? await getPlan(db, row.planId, orgId) : null;
  const run = toRun(row, summary, plan?.baselineRunId === row.id, reveal);
  // Waiting for agents: its place in the pool's line (first come first served, as the hub admits runs).
  if (row.status === "queued") run.queue = (await queuePlaces(db, orgId)).get(row.id) ?? null;
  return run;
}

/**
 * One page of GET /api/v1/runs, newest first. `next` is the cursor of the following page (the
 * page's last run id), null on the last page; a cursor that names no run of the org is a 400.
 */
export async function loadRunPage(
  orgId: string,
  q: { limit: number; offset: number; cursor?: string } & RunFilter,
): Promise<{ runs: RunListItem[]; next: string | null }> {
  const { limit, offset, cursor, ...filter } = q;
  const page = await listRunPage(getDb(), { orgId, limit, offset, after: cursor, ...filter });
  if (!page) throw unknownCursor("run", q.cursor!);
  const rows = page.rows;
  const [places, baselines] = await Promise.all([
    rows.some((r) => r.status === "queued") ? queuePlaces(getDb(), orgId) : new Map(),
    rows.some((r) => r.planId !== null) ? listBaselineRunIds(getDb(), orgId) : new Set<string>(),
  ]);
  const items: RunListItem[] = rows.map((row) => ({
    queue: places.get(row.id) ?? null,
    id: row.id,
    name: row.name,
    status: row.status,
    reason: row.reason,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    endedAt: iso(row.endedAt),
    summary: row.summary ? listSummary(row.summary) : null,
    planId: row.planId,
    tags: row.tags,
    baseline: baselines.has(row.id),
  }));
  return { runs: items, next: page.more && rows.length > 0 ? rows.at(-1)!.id : null };
}

/** A run's headline numbers: its round trips, or its deliveries when it timed no round trip (groups, broadcast without echo). */
function listSummary(s: RunSummary): NonNullable<RunListItem["summary"]> {
  const d = s.deliveries;
  if (d && s.latency.count === 0) {
    return { measure: "delivery", sent: s.messages.sent, received: d.received, lost: d.lost, p50: d.latency.p50, p95: d.latency.p95, p99: d.latency.p99 };
  }
  return {
    measure: "round trip",
    sent: s.messages.sent,
    received: s.messages.received,
    lost: s.messages.lost,
    p50: s.latency.p50,
    p95: s.latency.p95,
    p99: s.latency.p99,
  };
}

/** The run timeline: one point per 1 s interval, every shard's frame merged. */
export async function loadIntervals(id: string, orgId = DEFAULT_ORG_ID): Promise<IntervalPoint[]> {
  const db = getDb();
  const row = await getRun(db, id, orgId);
  if (!row) throw notFound(`run ${id}`);
  return runTimelineOf(db, id);
}

export const ABORT_REASON = "aborted by user";

/**
 * Stops a run. A queued run is finished as aborted right here; a running one is stopped by the hub,
 * which we ask over pub/sub. We publish in both cases: a hub may have started the queued run a
 * moment ago, and the message makes it stop its agents.
 */
export async function abortRun(id: string, orgId = DEFAULT_ORG_ID): Promise<AbortResponse> {
  const db = getDb();
  const row = await getRun(db, id, orgId);
  if (!row) throw notFound(`run ${id}`);
  if (isFinal(row.status)) throw new ApiError(409, "conflict", `run ${id} has already ended (${row.status}); there is nothing to stop`);
  const message = JSON.stringify(abortRequestSchema.parse({ runId: id, reason: ABORT_REASON }));
  const publish = () => withRedisDeadline("publish the abort request", getRedis().publish(REDIS_KEYS.abort, message));

  if (row.status === "queued") {
    const finished = await finishRun(db, id, { status: "aborted", reason: ABORT_REASON });
    if (finished) {
      await publish().catch((err: unknown) => getLogger().warn({ runId: id, err: String(err) }, "abort of a queued run not published"));
      return { id, status: "aborted", abort: "done" };
    }
    const now = await getRun(db, id, orgId);
    throw new ApiError(409, "conflict", `run ${id} has already ended (${now?.status ?? "unknown"}); there is nothing to stop`);
  }
  await publish();
  getLogger().info({ runId: id }, "abort requested");
  return { id, status: row.status, abort: "requested" };
}

/** How long after a run's planned end of sending a rate change is still taken (the run's start is when a hub took it, a little before its shards began). */
const RATE_CHANGE_SLACK_MS = 30_000;

/**
 * Changes a running run's rate (users: arrival rate) from a moment from now: recorded in the run,
 * then published for every hub replica, which tells its agents; each applies it at the same instant.
 */
export async function changeRunRate(id: string, body: RateChangeBody, orgId = DEFAULT_ORG_ID, actor?: AuthContext["actor"]): Promise<RateChangeResponse> {
  const db = getDb();
  const row = await getRun(db, id, orgId);
  if (!row) throw notFound(`run ${id}`);
  if (row.status !== "running")
    throw new ApiError(
      409,
      "conflict",
      `run ${id} is ${row.status}: only a running run's rate can change${row.status === "queued" ? " (change the plan, or wait until it starts)" : ""}`,
    );
  const what = body.connections !== undefined ? "connections" : "rate";
  const refusal = what === "connections" ? connectionsControlRefusal(row.plan) : rateControlRefusal(row.plan);
  if (refusal) throw new ApiError(409, "conflict", `run ${id}: ${refusal}`);
  const scaled = rateChangeScale(row.plan, body);
  if ("error" in scaled) throw new ApiError(400, "invalid_body", scaled.error);
  const at = Date.now() + RATE_CHANGE_LEAD_MS;
  const sendsUntil = (row.startedAt?.getTime() ?? at) + planTiming(row.plan).sendEndMs + RATE_CHANGE_SLACK_MS;
  if (at > sendsUntil) throw new ApiError(409, "conflict", `run ${id} has finished sending; it only waits for its last replies now`);
  const { rate, unit } = what === "connections" ? { rate: row.plan.connections.count, unit: "connections" as const } : planRate(row.plan);
  const by = actor?.kind === "user" ? actor.email : actor?.kind === "token" ? `API token ${actor.tokenId}` : "unknown";
  const change: RateChange = { at, scale: scaled.scale, rate: Math.round(rate * scaled.scale * 1000) / 1000, unit, by };
  const all = await appendRateChange(db, id, change);
  if (!all) throw new ApiError(409, "conflict", `run ${id} has just ended; its rate can no longer change`);
  const message = JSON.stringify(rateRequestSchema.parse({ runId: id, scale: change.scale, at, what }));
  await withRedisDeadline("publish the rate change", getRedis().publish(REDIS_KEYS.rate, message));
  getLogger().info({ runId: id, scale: change.scale, at }, "rate change requested");
  return { id, change, rateChanges: all };
}
