import { runReportHtml } from "@/lib/run-report";
import { apiHandler } from "@/server/http/api-handler";
import { loadRunAnalysis } from "@/server/runs/run-analysis";
import { loadIntervals, loadRun } from "@/server/runs/runs";

/**
 * GET /api/v1/runs/{id}/report.html → the run as one self-contained HTML document (charts as inline
 * SVG, nothing fetched), for sharing and printing; `?inline=1` shows it instead of downloading it.
 */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ req, params, auth }) => {
    const id = params.id ?? "";
    const [run, intervals, analysis] = await Promise.all([loadRun(id, auth.orgId), loadIntervals(id, auth.orgId), loadRunAnalysis(id, auth.orgId)]);
    const inline = new URL(req.url).searchParams.get("inline") === "1";
    return new Response(runReportHtml(run, intervals, analysis), {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        // The report is our own markup with every run text escaped; still, it runs nothing and loads nothing.
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
        "content-disposition": `${inline ? "inline" : "attachment"}; filename="${id}-report.html"`,
      },
    });
  },
});
