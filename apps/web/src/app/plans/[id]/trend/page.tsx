import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { ErrorPanel } from "../../../../components/error-panel";
import { PlanTrend } from "../../../../components/plan-trend";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";
import { loadPlanTrend } from "@/server/runs/plan-trend";

export const metadata: Metadata = { title: "Plan trend" };

export default async function PlanTrendPage({ params }: { params: Promise<{ id: string }> }) {
  const { orgId } = await pageSession();
  const { id } = await params;
  let trend: Awaited<ReturnType<typeof loadPlanTrend>> = null;
  try {
    trend = await loadPlanTrend(orgId, id);
  } catch (err) {
    const problem = describeLoadError(err, "this plan's runs");
    return <ErrorPanel title={problem.title} message={problem.message} />;
  }
  if (!trend) notFound();
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Trend: {trend.planName}</h1>
          <p className="muted">
            Each finished run of the plan, oldest first: latency, capacity and errors, and where a run regressed against the plan&apos;s baseline.
          </p>
        </div>
      </div>
      <PlanTrend trend={trend} />
    </>
  );
}
