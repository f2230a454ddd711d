import { putMetricsExportBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { orgMetricsExport, removeOrgMetricsExport, setOrgMetricsExport } from "@/server/metrics-export/metrics-export";

/** GET /api/v1/metrics-export → {"metricsExport": {...} | null}: the org's Prometheus remote-write export, never its Authorization header. Org admins. */
export const GET = apiHandler({
  permission: "org:admin",
  handler: async ({ auth }) => json({ metricsExport: await orgMetricsExport(auth.orgId) }),
});

/** PUT /api/v1/metrics-export {"url", "authorization"?, "labels"?, "enabled"?} → 200 {"metricsExport"}: every settled second of the org's runs is pushed there. */
export const PUT = apiHandler({
  permission: "org:admin",
  body: putMetricsExportBodySchema,
  handler: async ({ body, auth }) => json({ metricsExport: await setOrgMetricsExport(auth.orgId, body) }),
});

/** DELETE /api/v1/metrics-export → 204: nothing is pushed from now on. */
export const DELETE = apiHandler({
  permission: "org:admin",
  handler: async ({ auth }) => {
    await removeOrgMetricsExport(auth.orgId);
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});
