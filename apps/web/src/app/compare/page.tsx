import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { CompareView } from "../../components/compare-view";
import { ErrorPanel } from "../../components/error-panel";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";
import { loadPlanList } from "@/server/plans/plans";

export const metadata: Metadata = { title: "Compare" };

export default async function ComparePage({ searchParams }: { searchParams: Promise<{ runs?: string; plan?: string }> }) {
  const { orgId } = await pageSession();
  const { runs = "", plan } = await searchParams;
  // The trend used to live here: old links keep working.
  if (plan) redirect(`/plans/${encodeURIComponent(plan)}/trend`);
  let plans: { id: string; name: string }[] = [];
  let problem: ReturnType<typeof describeLoadError> | null = null;
  try {
    plans = (await loadPlanList(orgId, { limit: 200, offset: 0 })).map((p) => ({ id: p.id, name: p.name }));
  } catch (err) {
    problem = describeLoadError(err, "plans");
  }
  const selected = runs.split(",").filter((id) => /^[\w-]{1,100}$/.test(id));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Compare</h1>
          <p className="muted">
            Pick runs to put their numbers side by side and overlay their timelines and latency-vs-rate curves: the same plan over time, or one plan against
            different servers.
          </p>
        </div>
      </div>
      {problem ? <ErrorPanel title={problem.title} message={problem.message} /> : null}
      <CompareView plans={plans} selected={selected} />
    </>
  );
}
