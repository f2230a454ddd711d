import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  listDeliveriesQuerySchema,
  metaPatchBodySchema,
  planScheduleBodySchema,
  planScheduleSchema,
  planTrendSchema,
  runShareSchema,
  setBaselineBodySchema,
  webhookDeliverySchema,
  webhookTestResponseSchema,
} from "@volley/contracts";
import type { Status } from "./openapi";

/**
 * The OpenAPI paths of run metadata, baselines, trends, share links, plan schedules and webhook
 * deliveries (openapi.ts builds the rest and names the shared schemas).
 */

type Content = { description: string; content: { "application/json": { schema: z.ZodType } } };

export const COMPARE_ROUTES = [
  { method: "patch", path: "/api/v1/runs/{id}" },
  { method: "post", path: "/api/v1/runs/{id}/shares" },
  { method: "get", path: "/api/v1/runs/{id}/shares" },
  { method: "get", path: "/api/v1/shares/{id}" },
  { method: "delete", path: "/api/v1/shares/{id}" },
  { method: "patch", path: "/api/v1/plans/{id}" },
  { method: "put", path: "/api/v1/plans/{id}/baseline" },
  { method: "delete", path: "/api/v1/plans/{id}/baseline" },
  { method: "get", path: "/api/v1/plans/{id}/trend" },
  { method: "get", path: "/api/v1/plans/{id}/schedule" },
  { method: "put", path: "/api/v1/plans/{id}/schedule" },
  { method: "delete", path: "/api/v1/plans/{id}/schedule" },
  { method: "post", path: "/api/v1/webhooks/{id}/test" },
  { method: "get", path: "/api/v1/webhooks/{id}/deliveries" },
] as const;

export function comparePaths(c: {
  named: <T extends z.ZodType>(name: string, schema: T) => T;
  Run: z.ZodType;
  PlanRecord: z.ZodType;
  jsonBody: (schema: z.ZodType, description: string) => Content;
  errors: (...statuses: Status[]) => Record<string, Content>;
  noContent: (description: string) => { description: string };
  sessionOnly: Record<string, string[]>[];
}): RouteConfig[] {
  const { named, Run, PlanRecord, jsonBody, errors, noContent, sessionOnly } = c;
  const MetaPatchBody = named("MetaPatchBody", metaPatchBodySchema);
  const RunShare = named("RunShare", runShareSchema);
  const PlanTrend = named("PlanTrend", planTrendSchema);
  const PlanSchedule = named("PlanSchedule", planScheduleSchema);
  const PlanScheduleBody = named("PlanScheduleBody", planScheduleBodySchema);
  const WebhookDelivery = named("WebhookDelivery", webhookDeliverySchema);
  const runParams = z.object({ id: z.string().describe("The run id.") });
  const planParams = z.object({ id: z.string().describe("The plan id.") });
  const webhookParams = z.object({ id: z.string().describe("The webhook id (`whk_…`).") });
  const body = (schema: z.ZodType) => ({ body: { required: true, content: { "application/json": { schema } } } });
  return [
    {
      method: "patch",
      path: "/api/v1/runs/{id}",
      operationId: "updateRunMeta",
      tags: ["runs"],
      summary: "Set a run's tags and/or notes",
      description: "Only the fields sent change. Tags: at most 20, each 1–40 letters, digits and `. _ : / -`; filter the run list by one with `?tag=`.",
      request: { params: runParams, ...body(MetaPatchBody) },
      responses: { 200: jsonBody(Run, "The run."), ...errors(400, 404, 500, 503) },
    },
    {
      method: "post",
      path: "/api/v1/runs/{id}/shares",
      operationId: "shareRun",
      tags: ["runs"],
      summary: "Make a read-only link to a run for the members of its organization",
      description:
        "The link (`path`, on this Volley's origin) opens the run for any signed-in member of the run's organization, viewers included, whatever organization they have active (it becomes the active one); for anyone else it is a 404, like a revoked or unknown link. It grants nothing: what a member may do on the run is what their role allows.",
      request: { params: runParams },
      responses: { 201: jsonBody(z.object({ share: RunShare }), "The link."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs/{id}/shares",
      operationId: "listRunShares",
      tags: ["runs"],
      summary: "List a run's share links, newest first (revoked ones included)",
      request: { params: runParams },
      responses: { 200: jsonBody(z.object({ shares: z.array(RunShare) }), "The links."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/shares/{id}",
      operationId: "getSharedRun",
      tags: ["runs"],
      summary: "Get the run a share link opens",
      description: "For a member of the run's organization (session, any active organization) or an API token of it; 404 otherwise.",
      request: { params: z.object({ id: z.string().describe("The share link id (`shr_…`).") }) },
      responses: { 200: jsonBody(Run, "The run."), ...errors(404, 500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/shares/{id}",
      operationId: "revokeRunShare",
      tags: ["runs"],
      summary: "Revoke a share link; it opens nothing from now on",
      request: { params: z.object({ id: z.string().describe("The share link id (`shr_…`).") }) },
      responses: { 204: noContent("Revoked."), ...errors(404, 500, 503) },
    },
    {
      method: "patch",
      path: "/api/v1/plans/{id}",
      operationId: "updatePlanMeta",
      tags: ["plans"],
      summary: "Set a plan's tags and/or notes (no new version)",
      request: { params: planParams, ...body(MetaPatchBody) },
      responses: { 200: jsonBody(PlanRecord, "The plan."), ...errors(400, 404, 500, 503) },
    },
    {
      method: "put",
      path: "/api/v1/plans/{id}/baseline",
      operationId: "setPlanBaseline",
      tags: ["plans"],
      summary: "Mark a finished run of the plan as its baseline",
      description:
        "The compare page's deltas and the trend's regression flags are against it. 400 naming `runId` for a run of another plan; 409 for a run without a summary yet.",
      request: { params: planParams, ...body(named("SetBaselineBody", setBaselineBodySchema)) },
      responses: { 200: jsonBody(z.object({ planId: z.string(), baselineRunId: z.string().nullable() }), "The baseline."), ...errors(400, 404, 409, 500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/plans/{id}/baseline",
      operationId: "clearPlanBaseline",
      tags: ["plans"],
      summary: "Clear the plan's baseline",
      request: { params: planParams },
      responses: { 204: noContent("Cleared."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/plans/{id}/trend",
      operationId: "getPlanTrend",
      tags: ["plans"],
      summary: "The plan's trend across its finished runs, regressions against its baseline flagged",
      request: { params: planParams },
      responses: { 200: jsonBody(PlanTrend, "The trend."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/plans/{id}/schedule",
      operationId: "getPlanSchedule",
      tags: ["plans"],
      summary: "The plan's cron schedule, with its last and next run",
      request: { params: planParams },
      responses: { 200: jsonBody(PlanSchedule, "The schedule."), ...errors(404, 500, 503) },
    },
    {
      method: "put",
      path: "/api/v1/plans/{id}/schedule",
      operationId: "setPlanSchedule",
      tags: ["plans"],
      summary: "Run the plan on a cron schedule (create or replace)",
      description:
        "At each firing a hub starts the plan's latest version as a run. `cron` has 5 fields (or 6 with seconds first) and may fire at most once a minute; `timezone` is an IANA name (default UTC). The target is admitted now as a run's would be. 400 names the field that is wrong.",
      request: { params: planParams, ...body(PlanScheduleBody) },
      responses: { 200: jsonBody(PlanSchedule, "Replaced."), 201: jsonBody(PlanSchedule, "Created."), ...errors(400, 404, 500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/plans/{id}/schedule",
      operationId: "deletePlanSchedule",
      tags: ["plans"],
      summary: "Stop running the plan on a schedule",
      request: { params: planParams },
      responses: { 204: noContent("Deleted."), ...errors(404, 500, 503) },
    },
    {
      method: "post",
      path: "/api/v1/webhooks/{id}/test",
      operationId: "testWebhook",
      tags: ["webhooks"],
      summary: "Send a test delivery and see what the receiver answered",
      description:
        "A `webhook.test` event (`x-volley-event: webhook.test`), signed and in the webhook's format like real events, sent once by a hub. 200 with the attempt (status, time, the start of the answer); 202 with `delivery: null` when no hub made it within 8 s.",
      security: sessionOnly,
      request: { params: webhookParams },
      responses: {
        200: jsonBody(named("WebhookTestResponse", webhookTestResponseSchema.extend({ delivery: WebhookDelivery.nullable() })), "The attempt."),
        202: jsonBody(webhookTestResponseSchema, "Queued; not attempted yet."),
        ...errors(404, 409, 500, 503),
      },
    },
    {
      method: "get",
      path: "/api/v1/webhooks/{id}/deliveries",
      operationId: "listWebhookDeliveries",
      tags: ["webhooks"],
      summary: "The webhook's recent delivery attempts, newest first",
      security: sessionOnly,
      request: { params: webhookParams, query: listDeliveriesQuerySchema },
      responses: { 200: jsonBody(z.object({ deliveries: z.array(WebhookDelivery) }), "The attempts."), ...errors(400, 404, 500, 503) },
    },
  ];
}
