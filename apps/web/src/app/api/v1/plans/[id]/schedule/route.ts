import { planScheduleBodySchema } from "@volley/contracts";
import { apiHandler, json } from "@/server/http/api-handler";
import { notFound } from "@/server/http/errors";
import { loadSchedule, removeSchedule, saveSchedule } from "@/server/schedules/schedules";

/** GET /api/v1/plans/{id}/schedule → the plan's schedule with its last and next run; 404 when it has none. */
export const GET = apiHandler({
  permission: "plans:read",
  handler: async ({ params, auth }) => {
    const schedule = await loadSchedule(auth.orgId, params.id ?? "");
    if (!schedule) throw notFound(`schedule of plan ${params.id}`);
    return json(schedule);
  },
});

/**
 * PUT /api/v1/plans/{id}/schedule {"cron", "timezone"?, "enabled"?} → 201 (new) or 200: the plan
 * runs its latest version at each firing. 400 naming `cron` or `timezone` when they are invalid or
 * fire more than once a minute; the plan's target is admitted now, as a run's would be.
 */
export const PUT = apiHandler({
  permission: "plans:write",
  body: planScheduleBodySchema,
  handler: async ({ params, body, auth }) => {
    const { schedule, created } = await saveSchedule(auth, params.id ?? "", body);
    return json(schedule, created ? 201 : 200);
  },
});

/** DELETE /api/v1/plans/{id}/schedule → 204: the plan no longer runs by itself. */
export const DELETE = apiHandler({
  permission: "plans:write",
  handler: async ({ params, auth }) => {
    await removeSchedule(auth.orgId, params.id ?? "");
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  },
});
