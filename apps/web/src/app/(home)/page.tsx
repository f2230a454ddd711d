import Link from "next/link";
import { headers } from "next/headers";
import { ErrorPanel } from "../../components/error-panel";
import { RunsTable } from "../../components/runs-table";
import type { RunListItem } from "../../lib/types";
import { describeLoadError } from "@/server/http/page-errors";
import { pageSession } from "@/server/http/page-session";
import { loadRunPage } from "@/server/runs/runs";
import { loadPlanList } from "@/server/plans/plans";
import { describeIssues, fieldIssues, listRunsQuerySchema } from "@volley/contracts";
import { filterParams, filtersFrom, type RunFilterValues } from "../../lib/run-filter-values";
import { RunsListFilters } from "../../components/runs-list-filters";

const filterParamsObject = (f: RunFilterValues) => Object.fromEntries(filterParams(f));

const PAGE_SIZE = 50;

export default async function RunsPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const auth = await pageSession();
  const h = await headers(); // rendered per request: the list comes from the database
  const origin = `${h.get("x-forwarded-proto") ?? "http"}://${h.get("x-forwarded-host") ?? h.get("host") ?? "localhost:3000"}`;
  const params = await searchParams;
  const filters = filtersFrom(params);
  const filtered = Object.values(filters).some(Boolean);
  let runs: RunListItem[] | null = null;
  let next: string | null = null;
  let plans: { id: string; name: string }[] = [];
  let problem: ReturnType<typeof describeLoadError> | null = null;
  // The same validation as GET /api/v1/runs: a bad filter is named, not ignored.
  const query = listRunsQuerySchema.safeParse({
    ...filterParamsObject(filters),
    limit: String(PAGE_SIZE),
    ...(params.cursor ? { cursor: params.cursor } : {}),
  });
  if (!query.success) problem = { title: "Those filters are not valid", message: describeIssues(fieldIssues(query.error)), status: 400 };
  else {
    try {
      [{ runs, next }, plans] = await Promise.all([
        loadRunPage(auth.orgId, query.data),
        loadPlanList(auth.orgId, { limit: 200, offset: 0 }).then((ps) => ps.map((p) => ({ id: p.id, name: p.name }))),
      ]);
    } catch (err) {
      problem = describeLoadError(err, "runs");
    }
  }
  const pageHref = (cursor: string | null) => {
    const p = filterParams(filters);
    if (cursor) p.set("cursor", cursor);
    const qs = p.toString();
    return qs ? `/?${qs}` : "/";
  };

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
      <RunsListFilters value={filters} plans={plans} />
      {problem ? (
        <ErrorPanel title={problem.title} message={problem.message} />
      ) : runs && runs.length === 0 && (filtered || params.cursor) ? (
        <div className="panel empty">
          <p>No runs match these filters.</p>
        </div>
      ) : runs && runs.length === 0 ? (
        <div className="panel empty">
          <h2 className="panel-title">No runs yet</h2>
          <p>
            Write a test plan and start it with <Link href="/runs/new">New run</Link>, or from CI with <code>POST /api/v1/runs</code>. Runs appear here as soon
            as they are queued.
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
        <>
          <RunsTable runs={runs ?? []} />
          <nav className="pager small" aria-label="Pages">
            {params.cursor && <Link href={pageHref(null)}>← Newest</Link>}
            {next && (
              <Link href={pageHref(next)} data-testid="next-page">
                Older runs →
              </Link>
            )}
          </nav>
        </>
      )}
    </>
  );
}
