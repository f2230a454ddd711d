import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { cache } from "react";
import { stringify } from "yaml";
import { ErrorPanel } from "../../../../components/error-panel";
import { RunView } from "../../../../components/run-view";
import { packedPointsJson } from "../../../../lib/packed-points";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";
import { loadSharedRun } from "@/server/shares/run-shares";

// A run opened through its share link (GET /share/{id} sends members here), shown read-only in its
// own org: the member's active org, and so every other page they have open, stays as it was.
const load = cache(async (id: string) => {
  const auth = await pageSession();
  try {
    const shared = await loadSharedRun(id, auth.actor.userId);
    return shared ? { ok: true as const, ...shared } : { ok: false as const, notFound: true as const };
  } catch (err) {
    return { ok: false as const, notFound: false as const, problem: describeLoadError(err, "this shared run") };
  }
});

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const r = await load((await params).id);
  return { title: r.ok ? `${r.run.name} (shared)` : "Shared run" };
}

export default async function SharedRunPage({ params }: { params: Promise<{ id: string }> }) {
  const r = await load((await params).id);
  if (!r.ok) {
    // The same answer for an unknown, a revoked and another org's link.
    if (r.notFound) notFound();
    return <ErrorPanel title={r.problem.title} message={r.problem.message} />;
  }
  return (
    <>
      <div className="banner" role="status" data-testid="shared-run">
        Shared run of <strong>{r.orgName}</strong>, read-only. Your active organization is unchanged.
      </div>
      <RunView
        key={r.run.id}
        initialRun={r.run}
        initialPoints={packedPointsJson(r.intervals)}
        planYaml={stringify(r.run.plan)}
        shared={{ analysis: r.analysis }}
      />
    </>
  );
}
