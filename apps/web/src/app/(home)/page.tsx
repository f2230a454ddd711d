import Link from "next/link";
import { headers } from "next/headers";
import { ErrorPanel } from "../../components/error-panel";
import { RunsTable } from "../../components/runs-table";
import type { RunListItem } from "../../lib/types";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";
import { loadRunList } from "@/server/runs/runs";

export default async function RunsPage() {
  const auth = await pageSession();
  const h = await headers(); // rendered per request: the list comes from the database
  const origin = `${h.get("x-forwarded-proto") ?? "http"}://${h.get("x-forwarded-host") ?? h.get("host") ?? "localhost:3000"}`;
  let runs: RunListItem[] | null = null;
  let problem: ReturnType<typeof describeLoadError> | null = null;
  try {
    runs = await loadRunList(50, auth.orgId);
  } catch (err) {
    problem = describeLoadError(err, "runs");
  }

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Runs</h1>
          <p className="muted">Recent load-test runs, newest first.</p>
        </div>
        <Link href="/runs/new" className="button primary">
          New run
        </Link>
      </div>
      {problem ? (
        <ErrorPanel title={problem.title} message={problem.message} />
      ) : runs && runs.length === 0 ? (
        <div className="panel empty">
          <h2 className="panel-title">No runs yet</h2>
          <p>
            Write a test plan and start it with <Link href="/runs/new">New run</Link>, or from CI with{" "}
            <code>POST /api/v1/runs</code>. Runs appear here as soon as they are queued.
          </p>
          <p>
            For CI, create an API token under <Link href="/settings/tokens">Settings → API tokens</Link>.
          </p>
          <pre className="code-block">{`curl -X POST ${origin}/api/v1/runs \\
  -H "Authorization: Bearer $VOLLEY_TOKEN" \\
  -H 'content-type: application/json' \\
  -d '{"plan": {"name": "echo", "target": {"url": "ws://127.0.0.1:9001/echo"},
       "connections": {"count": 10},
       "scenario": {"kind": "echo", "message": {"rate": 5}, "duration": "10s"}}}'`}</pre>
        </div>
      ) : (
        <RunsTable runs={runs ?? []} />
      )}
    </>
  );
}
