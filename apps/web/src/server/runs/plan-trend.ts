import { getPlan, listRuns } from "@volley/db";
import { getDb } from "../http/services";

export interface PlanTrend {
  planId: string;
  planName: string;
  /** Finished runs of the plan with a summary, oldest first. */
  points: { runId: string; at: string; p95: number | null; sendRate: number; receiveRate: number }[];
}

/** A plan's trend across its runs: p95 and throughput per finished run; null when the plan is not the org's. */
export async function loadPlanTrend(orgId: string, planId: string): Promise<PlanTrend | null> {
  const db = getDb();
  const plan = await getPlan(db, planId, orgId);
  if (!plan) return null;
  const rows = await listRuns(db, { orgId, planId, limit: 200 });
  const points = rows
    .filter((r) => r.summary !== null)
    .reverse()
    .map((r) => ({ runId: r.id, at: (r.startedAt ?? r.createdAt).toISOString(), p95: r.summary!.latency.p95, sendRate: r.summary!.messages.sendRate, receiveRate: r.summary!.messages.receiveRate }));
  return { planId, planName: plan.name, points };
}
