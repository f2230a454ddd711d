import { runToJunit } from "@volley/contracts";
import { publicUrl } from "../../../../../../env";
import { apiHandler } from "@/server/http/api-handler";
import { loadRun } from "@/server/runs/runs";

/** GET /api/v1/runs/{id}/junit → JUnit XML: one testcase per threshold, plus one for the run itself (as `volley run --junit` writes). */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ req, params, auth }) => {
    const run = await loadRun(params.id ?? "", auth.orgId);
    const origin = publicUrl() ?? new URL(req.url).origin;
    return new Response(runToJunit(run, `${origin}/runs/${run.id}`), {
      headers: {
        "content-type": "application/xml; charset=utf-8",
        "cache-control": "no-store",
        "content-disposition": `attachment; filename="${run.id}-junit.xml"`,
      },
    });
  },
});
