import { intervalsCsv } from "../../../../../../lib/intervals-csv";
import { apiHandler } from "@/server/http/api-handler";
import { loadIntervals } from "@/server/runs/runs";

/** GET /api/v1/runs/{id}/intervals.csv → the merged timeline as CSV, one row per second (the run page's export). */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ params, auth }) => {
    const id = params.id ?? "";
    return new Response(intervalsCsv(await loadIntervals(id, auth.orgId)), {
      headers: { "content-type": "text/csv; charset=utf-8", "cache-control": "no-store", "content-disposition": `attachment; filename="${id}-intervals.csv"` },
    });
  },
});
