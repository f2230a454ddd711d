import { runToJunit } from "@volley/contracts";
import { apiHandler } from "@/server/http/api-handler";
import { publicOrigin } from "@/server/http/request-origin";
import { loadRun } from "@/server/runs/runs";

/** GET /api/v1/runs/{id}/junit → JUnit XML: one testcase per threshold, plus one for the run itself (as `volley run --junit` writes). */
export const GET = apiHandler({
  permission: "runs:read",
  handler: async ({ req, params, auth }) => {
    const run = await loadRun(params.id ?? "", auth.orgId);
    // The origin the user reached, not the request URL Next builds from the bind address (http://0.0.0.0:3000).
    const origin = publicOrigin(req.headers);
    return new Response(runToJunit(run, `${origin}/runs/${run.id}`), {
      headers: {
        "content-type": "application/xml; charset=utf-8",
        "cache-control": "no-store",
        "content-disposition": `attachment; filename="${run.id}-junit.xml"`,
      },
    });
  },
});
