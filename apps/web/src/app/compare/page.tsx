import type { Metadata } from "next";
import { CompareView } from "../../components/compare-view";
import { ErrorPanel } from "../../components/error-panel";
import { PlanTrend } from "../../components/plan-trend";
import type { RunListItem } from "../../lib/types";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";
import { loadPlanTrend } from "@/server/runs/plan-trend";
import { loadRunList } from "@/server/runs/runs";

export const metadata: Metadata = { title: "Compare" };

export default async function ComparePage({ searchParams }: { searchParams: Promise<{ runs?: string; plan?: string }> }) {
  const { orgId } = await pageSession();
  const { runs = "", plan } = await searchParams;
  let candidates: RunListItem[] = [];
  let problem: ReturnType<typeof describeLoadError> | null = null;
  let trend: Awaited<ReturnType<typeof loadPlanTrend>> = null;
  try {
    [candidates, trend] = await Promise.all([loadRunList(100, orgId), plan ? loadPlanTrend(orgId, plan) : null]);
  } catch (err) {
    problem = describeLoadError(err, "runs");
  }
  const selected = runs.split(",").filter((id) => candidates.some((c) => c.id === id));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Compare</h1>
          <p className="muted">Pick runs to overlay their timelines and latency-vs-rate curves: the same plan over time, or one plan against different servers.</p>
        </div>
      </div>
      {problem ? <ErrorPanel title={problem.title} message={problem.message} /> : null}
      {trend && <PlanTrend trend={trend} />}
      <CompareView candidates={candidates} selected={selected} />
    </>
  );
}
