import { getPlan, getRun, listRuns } from "@volley/db";
import { FINAL_RUN_STATUSES, TREND_METRICS, type PlanTrend, type PlanTrendPoint, type RunSummary, type TrendMetric } from "@volley/contracts";
import { deltaOf, COMPARE_METRICS, REGRESSION_TOLERANCE_PCT } from "@/lib/run-deltas";
import { getDb } from "../http/services";

const metric = (key: TrendMetric | "errors") => COMPARE_METRICS.find((m) => m.key === key)!;

/**
 * A plan's trend across its runs: p95, capacity, errors and throughput per finished run, each run
 * flagged where it regressed against the plan's baseline; null when the plan is not the org's.
 */
export async function loadPlanTrend(orgId: string, planId: string, limit = 200): Promise<PlanTrend | null> {
  const db = getDb();
  const plan = await getPlan(db, planId, orgId);
  if (!plan) return null;
  const rows = await listRuns(db, { orgId, planId, limit });
  const finished = rows.filter((r) => r.summary !== null && FINAL_RUN_STATUSES.includes(r.status)).reverse();
  // The baseline may be older than the runs listed.
  const baselineRow = plan.baselineRunId ? (finished.find((r) => r.id === plan.baselineRunId) ?? (await getRun(db, plan.baselineRunId, orgId))) : null;
  const base: RunSummary | null = baselineRow?.summary ?? null;
  const points = finished.map((r): PlanTrendPoint => {
    const s = r.summary!;
    const regressions = base && r.id !== baselineRow?.id ? TREND_METRICS.filter((k) => deltaOf(metric(k), base, s).verdict === "worse") : [];
    return {
      runId: r.id,
      name: r.name,
      status: r.status,
      at: (r.startedAt ?? r.createdAt).toISOString(),
      tags: r.tags,
      planVersion: r.planVersion,
      p95: metric("p95").value(s),
      capacity: metric("capacity").value(s),
      errorRate: metric("errorRate").value(s),
      errors: metric("errors").value(s) ?? 0,
      sendRate: s.messages.sendRate,
      receiveRate: s.messages.receiveRate,
      regressions,
    };
  });
  return {
    planId,
    planName: plan.name,
    baselineRunId: baselineRow?.id ?? null,
    baselinePlanVersion: baselineRow?.planVersion ?? null,
    tolerancePct: REGRESSION_TOLERANCE_PCT,
    points,
  };
}
