import { parsePlanDocument, validatePlan, type PlanParseResult } from "@volley/contracts";
import { z } from "zod";
import { apiHandler, invalidBody, json, readJson } from "@/server/http/api-handler";
import { preflightWarnings } from "@/server/runs/preflight";

const yamlBodySchema = z.strictObject({ yaml: z.string() });

/**
 * POST /api/v1/plans/validate — the body is a plan (JSON) or {"yaml": "..."} →
 * {"ok": true, "plan", "warnings"} with defaults filled in (warnings: what the plan asks of its pool's
 * connected agents, see contracts agent-load.ts), or 400 invalid_body naming every bad field.
 */
export const POST = apiHandler({
  permission: "plans:read",
  handler: async ({ req, auth }) => {
    const body = await readJson(req);
    // A plan never has a `yaml` field (the schema is strict), so its presence selects the YAML form.
    const isYaml = typeof body === "object" && body !== null && !Array.isArray(body) && "yaml" in body;
    let result: PlanParseResult;
    if (isYaml) {
      const parsed = yamlBodySchema.safeParse(body);
      if (!parsed.success) throw invalidBody(parsed.error.issues.map((i) => ({ path: i.path.join(".") || "(root)", message: i.message })));
      result = parsePlanDocument(parsed.data.yaml);
    } else {
      result = validatePlan(body);
    }
    if (!result.ok) throw invalidBody(result.issues);
    return json({ ok: true, plan: result.plan, warnings: await preflightWarnings(result.plan, auth.orgId) });
  },
});
