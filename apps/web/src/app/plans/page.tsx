import { TEMPLATES, type PlanRecord } from "@volley/contracts";
import type { Metadata } from "next";
import Link from "next/link";
import { ErrorPanel } from "../../components/error-panel";
import { fmtInt } from "../../lib/format";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";
import { loadPlanList } from "@/server/plans/plans";
import { InlineCodeText } from "@/components/inline-code-text";

export const metadata: Metadata = { title: "Plans" };

export default async function PlansPage() {
  const { orgId } = await pageSession();
  let plans: PlanRecord[] | null = null;
  let problem: ReturnType<typeof describeLoadError> | null = null;
  try {
    plans = await loadPlanList(orgId, { limit: 200, offset: 0 });
  } catch (err) {
    problem = describeLoadError(err, "plans");
  }
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Plans</h1>
          <p className="muted">
            Saved test plans, each with its version history. Start one from a template below, from a blank plan, or import a browser recording or an Artillery
            script.
          </p>
        </div>
        <div className="head-actions">
          <Link href="/plans/import" className="button">
            Import
          </Link>
          <Link href="/plans/new" className="button primary">
            Blank plan
          </Link>
        </div>
      </div>
      {problem ? (
        <ErrorPanel title={problem.title} message={problem.message} />
      ) : plans && plans.length > 0 ? (
        <div className="table-scroll">
          <table className="table" aria-label="Saved plans">
            <thead>
              <tr>
                <th>Name</th>
                <th>Protocol</th>
                <th>Scenario</th>
                <th className="num">Connections</th>
                <th className="num">Version</th>
                <th>Changed</th>
              </tr>
            </thead>
            <tbody>
              {plans.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Link href={`/plans/${p.id}`}>{p.name}</Link>
                  </td>
                  <td>{p.plan.target.protocol}</td>
                  <td>{p.plan.scenario.kind}</td>
                  <td className="num">{fmtInt(p.plan.connections.count)}</td>
                  <td className="num">{p.version}</td>
                  <td>{new Date(p.updatedAt).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <div className="panel empty">
          <h2 className="panel-title">No saved plans yet</h2>
          <p>
            Pick a template to start from: each one runs against a reference server that <code>npm start</code> already runs on this machine.
          </p>
        </div>
      )}

      <h2 className="section-title">Templates</h2>
      <div className="template-grid">
        {TEMPLATES.map((t) => (
          <Link key={t.id} href={`/plans/new?template=${t.id}`} className="panel template-card" data-template={t.id}>
            <h3 className="panel-title">{t.title}</h3>
            <p className="small muted">
              <InlineCodeText text={t.description} />
            </p>
          </Link>
        ))}
        <Link href="/plans/import" className="panel template-card import-card" data-import="plan">
          <h3 className="panel-title">Import a recording or an Artillery script</h3>
          <p className="small muted">
            A HAR saved from the browser&apos;s DevTools (with its WebSocket messages), or an Artillery ws/socketio script: becomes a plan with a flow to
            review.
          </p>
        </Link>
      </div>
    </>
  );
}
