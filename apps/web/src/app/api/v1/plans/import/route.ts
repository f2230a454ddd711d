import { importPlanBodySchema, type ImportPlanResponse } from "@volley/contracts";
import { importArtillery, importHar, PlanImportError, planToYaml } from "@volley/plan-import";
import { apiHandler, invalidBody, json } from "@/server/http/api-handler";

/**
 * POST /api/v1/plans/import {"format": "har" | "artillery", "content", "files"?, "targetUrl"?, "origins"?} →
 * {"plan": <YAML>, "notes": [...]}: a plan to review (nothing is saved), and what to check in it.
 * Input that cannot become a plan is a 400 naming what is wrong with it.
 */
export const POST = apiHandler({
  permission: "plans:read",
  body: importPlanBodySchema,
  handler: async ({ body }) => {
    const options = {
      ...(body.targetUrl !== undefined ? { targetUrl: body.targetUrl } : {}),
      ...(body.origins !== undefined ? { origins: Object.fromEntries(Object.entries(body.origins).map(([k, v]) => [new URL(k).origin, v])) } : {}),
    };
    try {
      const result = body.format === "har" ? importHar(body.content, options) : importArtillery(body.content, { ...options, files: body.files ?? {} });
      return json({ plan: planToYaml(result.plan), notes: result.notes } satisfies ImportPlanResponse);
    } catch (err) {
      if (err instanceof PlanImportError) throw invalidBody([{ path: "content", message: err.message }]);
      throw err;
    }
  },
});
