import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { cache } from "react";
import { stringify } from "yaml";
import { ErrorPanel } from "../../../components/error-panel";
import { RunView } from "../../../components/run-view";
import { packedPointsJson } from "../../../lib/packed-points";
import { RunMetaPanel } from "../../../components/run-meta-panel";
import { may } from "@/server/auth/auth";
import { ApiError } from "@/server/http/errors";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";
import { loadIntervals, loadRun } from "@/server/runs/runs";

const load = cache(async (id: string) => {
  const auth = await pageSession();
  const { orgId } = auth;
  try {
    const [run, intervals] = await Promise.all([loadRun(id, orgId), loadIntervals(id, orgId)]);
    return { ok: true as const, run, intervals, canWrite: may(auth, "runs:write") };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { ok: false as const, notFound: true as const };
    return { ok: false as const, notFound: false as const, problem: describeLoadError(err, "this run") };
  }
});

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const r = await load((await params).id);
  return { title: r.ok ? r.run.name : "Run" };
}

export default async function RunPage({ params }: { params: Promise<{ id: string }> }) {
  const r = await load((await params).id);
  if (!r.ok) {
    if (r.notFound) notFound();
    return <ErrorPanel title={r.problem.title} message={r.problem.message} />;
  }
  return (
    <>
      <RunView key={r.run.id} initialRun={r.run} initialPoints={packedPointsJson(r.intervals)} planYaml={stringify(r.run.plan)} />
      <RunMetaPanel key={`meta-${r.run.id}`} run={r.run} canWrite={r.canWrite} />
    </>
  );
}
