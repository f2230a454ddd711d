import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { cache } from "react";
import { ErrorPanel } from "../../../components/error-panel";
import { PlanEditor } from "../../../components/plan-editor";
import { planEditorText } from "../../../lib/plan-text";
import { MetaEditor } from "../../../components/meta-editor";
import { ScheduleEditor } from "../../../components/schedule-editor";
import { may } from "@/server/auth/auth";
import { loadSchedule } from "@/server/schedules/schedules";
import { ApiError } from "@/server/http/errors";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";
import { loadPlan, loadPlanVersions } from "@/server/plans/plans";

const load = cache(async (id: string) => {
  const auth = await pageSession();
  const { orgId } = auth;
  // Viewers see the plan's target credentials as the redaction marker; editors see and keep them.
  const canWrite = may(auth, "plans:write");
  try {
    const [plan, versions, schedule] = await Promise.all([
      loadPlan(orgId, id, canWrite),
      loadPlanVersions(orgId, id, canWrite),
      loadSchedule(orgId, id).catch((err: unknown) => ({ unavailable: err instanceof Error ? err.message : String(err) })),
    ]);
    return { ok: true as const, plan, versions, schedule, canWrite };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { ok: false as const, notFound: true as const };
    return { ok: false as const, notFound: false as const, problem: describeLoadError(err, "this plan") };
  }
});

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const r = await load((await params).id);
  return { title: r.ok ? r.plan.name : "Plan" };
}

export default async function PlanPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ version?: string }> }) {
  const r = await load((await params).id);
  if (!r.ok) {
    if (r.notFound) notFound();
    return <ErrorPanel title={r.problem.title} message={r.problem.message} />;
  }
  const { version } = await searchParams;
  const shown = r.versions.find((v) => String(v.version) === version);
  const text = planEditorText(shown ?? r.plan);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>{r.plan.name}</h1>
          <p className="muted">
            Version {r.plan.version}
            {shown && shown.version !== r.plan.version ? ` — showing version ${shown.version}; saving makes it version ${r.plan.version + 1}` : ""} ·{" "}
            <Link href={`/?plan=${r.plan.id}`}>Runs of this plan</Link> · <Link href={`/plans/${r.plan.id}/trend`}>Trend</Link>
            {r.plan.baselineRunId && (
              <>
                {" "}
                · <Link href={`/runs/${r.plan.baselineRunId}`}>Baseline run</Link>
              </>
            )}
          </p>
        </div>
      </div>
      <PlanEditor key={shown?.version ?? "latest"} initialText={text} saved={{ id: r.plan.id, version: r.plan.version }} />
      <section className="panel" aria-label="Tags and notes">
        <h2 className="panel-title">Tags and notes</h2>
        <MetaEditor endpoint={`/api/v1/plans/${r.plan.id}`} initialTags={r.plan.tags} initialNotes={r.plan.notes} canEdit={r.canWrite} what="plan" />
      </section>
      {r.schedule && "unavailable" in r.schedule ? (
        <ErrorPanel title="The plan's schedule could not be read" message={r.schedule.unavailable} />
      ) : (
        <ScheduleEditor planId={r.plan.id} initial={r.schedule} canEdit={r.canWrite} />
      )}
      <section className="panel versions" aria-label="Version history">
        <h2 className="panel-title">Version history</h2>
        <ol reversed className="small">
          {[...r.versions].reverse().map((v) => (
            <li key={v.version}>
              <Link href={`/plans/${r.plan.id}?version=${v.version}`}>Version {v.version}</Link> — {v.name}, {new Date(v.createdAt).toLocaleString()}
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}
