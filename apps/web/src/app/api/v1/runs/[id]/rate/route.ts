import { rateChangeBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { changeRunRate } from "@/server/runs/runs";

/**
 * POST /api/v1/runs/{id}/rate {"rate": 40} or {"scale": 2} → 202 {"id", "change", "rateChanges"}:
 * from a second from now every agent of the running run sends at the new rate (users: arrival
 * rate); the change is recorded in the run and drawn on its timeline. 409 when the run is not
 * running or its plan's rate cannot change while it runs (sweeps, stages, closed loops, exact counts).
 */
export const POST = apiHandler({
  permission: "runs:write",
  body: rateChangeBodySchema,
  handler: async ({ params, body, auth }) => json(await changeRunRate(params.id ?? "", body, auth.orgId, auth.actor), 202),
});
