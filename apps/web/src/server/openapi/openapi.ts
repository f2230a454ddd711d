import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31, zodToOpenAPIRegistry, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import {
  API_ERROR_CODES,
  FINAL_RUN_STATUSES,
  agentListItemSchema,
  agentStatusSchema,
  agentTokenSchema,
  apiErrorSchema,
  apiTokenSchema,
  createApiTokenBodySchema,
  createApiTokenResponseSchema,
  createWebhookBodySchema,
  createWebhookResponseSchema,
  runFinishedPayloadSchema,
  webhookSchema,
  createAgentTokenBodySchema,
  createAgentTokenResponseSchema,
  startRunBodySchema,
  createRunResponseSchema,
  intervalPointSchema,
  planRecordSchema,
  planSchema,
  userStepSchema,
  planVersionSchema,
  importPlanBodySchema,
  importPlanResponseSchema,
  rateChangeBodySchema,
  rateChangeResponseSchema,
  rateChangeSchema,
  runWithMetaSchema,
  runStatusSchema,
  runSummarySchema,
  runAnalysisSchema,
  savePlanBodySchema,
  addTargetHostBodySchema,
  auditEventSchema,
  targetHostSchema,
  type AgentStatus,
  type ApiErrorCode,
  type ApiErrorStatus,
  type RunStatus,
} from "@volley/contracts";
import { z } from "zod";
import type { AbortResponse, RunListItem } from "@/lib/types";
import { targetPaths } from "./openapi-targets";
import { RUN_FINISHED_PAYLOAD, webhookPaths } from "./openapi-webhooks";
import { comparePaths, COMPARE_ROUTES } from "./openapi-compare";
import { metricsExportPaths } from "./openapi-metrics-export";

/**
 * The OpenAPI 3.1 document of /api/v1, generated from the same zod schemas the routes validate with,
 * so the document cannot drift from the code. Contracts stay free of web concerns: schemas get their
 * component names here through `registry.register()`, never through `.openapi()` in contracts.
 */

// registry.register() names a schema by calling its `.openapi()`, which this adds to zod's prototype.
// It only adds a method (idempotent), so patching here, in web, leaves contracts' behaviour unchanged.
// Zod 4 binds methods when a schema is constructed, so the contracts' schemas (built at import, before
// this line runs) lack it: `named()` registers a clone made afterwards.
extendZodWithOpenApi(z);
// A user's step holds steps (loops, choices, ifs): the schema refers to itself, so it must be one
// named component the generator references, not inlined forever. The getters that nest it return the
// contracts' own instance, so that instance (not a clone) carries the name.
zodToOpenAPIRegistry.add(userStepSchema, { _internal: { refId: "UserStep" } });

// Web-only response shapes. `satisfies` ties them to the TypeScript types the routes return, so a
// change to one without the other fails the typecheck.
const runListItemSchema = z.object({
  id: z.string(),
  name: z.string(),
  status: runStatusSchema,
  reason: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  summary: z
    .object({
      measure: z.enum(["round trip", "delivery"]).openapi({
        description:
          "What received, lost and the percentiles count: round trips, or deliveries for runs that time no round trip (groups, broadcast without echo)",
      }),
      sent: z.number().int(),
      received: z.number().int(),
      lost: z.number().int(),
      p50: z.number().nullable(),
      p95: z.number().nullable(),
      p99: z.number().nullable(),
    })
    .nullable(),
  planId: z.string().nullable().openapi({ description: "The saved plan it ran (null: an inline plan)" }),
  tags: z.array(z.string()),
  baseline: z.boolean().openapi({ description: "It is its plan's baseline (PUT /api/v1/plans/{id}/baseline)" }),
}) satisfies z.ZodType<RunListItem>;

const abortResponseSchema = z.object({
  id: z.string(),
  status: runStatusSchema,
  abort: z.enum(["done", "requested"]),
}) satisfies z.ZodType<AbortResponse>;

/** Every path the document describes; the test checks each is present. */
export const API_ROUTES = [
  { method: "post", path: "/api/v1/runs" },
  { method: "get", path: "/api/v1/runs" },
  { method: "get", path: "/api/v1/runs/{id}" },
  { method: "get", path: "/api/v1/runs/{id}/intervals" },
  { method: "get", path: "/api/v1/runs/{id}/analysis" },
  { method: "get", path: "/api/v1/runs/{id}/junit" },
  { method: "get", path: "/api/v1/runs/{id}/report.html" },
  { method: "get", path: "/api/v1/runs/{id}/intervals.csv" },
  { method: "post", path: "/api/v1/runs/{id}/abort" },
  { method: "post", path: "/api/v1/runs/{id}/rate" },
  { method: "post", path: "/api/v1/plans/validate" },
  { method: "post", path: "/api/v1/plans/import" },
  { method: "post", path: "/api/v1/plans" },
  { method: "get", path: "/api/v1/plans" },
  { method: "get", path: "/api/v1/plans/{id}" },
  { method: "put", path: "/api/v1/plans/{id}" },
  { method: "delete", path: "/api/v1/plans/{id}" },
  { method: "get", path: "/api/v1/plans/{id}/versions" },
  { method: "post", path: "/api/v1/tokens" },
  { method: "get", path: "/api/v1/tokens" },
  { method: "delete", path: "/api/v1/tokens/{id}" },
  { method: "post", path: "/api/v1/webhooks" },
  { method: "get", path: "/api/v1/webhooks" },
  { method: "delete", path: "/api/v1/webhooks/{id}" },
  { method: "get", path: "/api/v1/agents" },
  { method: "delete", path: "/api/v1/agents/{id}" },
  { method: "post", path: "/api/v1/agent-tokens" },
  { method: "get", path: "/api/v1/agent-tokens" },
  { method: "delete", path: "/api/v1/agent-tokens/{id}" },
  { method: "post", path: "/api/v1/targets" },
  { method: "get", path: "/api/v1/targets" },
  { method: "post", path: "/api/v1/targets/{id}/verify" },
  { method: "delete", path: "/api/v1/targets/{id}" },
  { method: "get", path: "/api/v1/audit" },
  { method: "get", path: "/api/v1/openapi.json" },
  ...COMPARE_ROUTES,
] as const;

export type Status = ApiErrorStatus;

/** Per status, every code that comes with it and what it means (contracts' API_ERROR_CODES). */
export function errorStatusDescription(status: Status): string {
  const codes = (Object.entries(API_ERROR_CODES) as [ApiErrorCode, { status: number; description: string }][]).filter(([, e]) => e.status === status);
  return codes.map(([code, e]) => `\`${code}\`: ${e.description}.`).join(" ");
}

// Record<…> over the contracts' enums: a status added there fails the typecheck until it is described here.
const RUN_STATUS_MEANINGS: Record<RunStatus, string> = {
  queued: "waiting for a hub and agents",
  running: "agents are sending load",
  passed: "every threshold held",
  failed: "a threshold failed",
  errored: "the run could not complete (the reason says why)",
  aborted: "stopped by an abort request (POST /runs/{id}/abort, the run page, or `volley run` interrupted)",
  degraded: "an agent was lost under `agents.onLoss: degrade`; the others finished, so the results are from less load than planned",
  inconclusive:
    "the run completed but nothing decided its verdict on the server's account: a capacity search none of whose steps could be judged (the load generator limited the first, or it was cut short); `reason` says why. Not a pass; not a baseline",
};
const AGENT_STATUS_MEANINGS: Record<AgentStatus, string> = {
  online: "connected and idle",
  busy: "running a shard",
  offline: "not connected",
};
const meanings = <S extends string>(values: readonly S[], text: Record<S, string>) => values.map((v) => `\`${v}\` (${text[v]})`).join(", ");

function build() {
  const registry = new OpenAPIRegistry();
  const named = <T extends z.ZodType>(name: string, schema: T): T => registry.register(name, schema.clone());

  const Plan = named("Plan", planSchema);
  const ApiError = named("ApiError", apiErrorSchema);
  const RunSummary = named("RunSummary", runSummarySchema);
  // Re-point the nested fields at the named components so the document references them, not copies.
  const Run = named("Run", runWithMetaSchema.extend({ plan: Plan, summary: RunSummary.nullable() }));
  const IntervalPoint = named("IntervalPoint", intervalPointSchema);
  const RunListItem = named("RunListItem", runListItemSchema);
  const NextCursor = z.string().nullable().describe("Pass it as `cursor` to get the next page; null on the last page.");
  const RunAnalysis = named("RunAnalysis", runAnalysisSchema);
  const CreateRunBody = named("CreateRunBody", startRunBodySchema.safeExtend({ plan: Plan.optional() }));
  const CreateRunResponse = named("CreateRunResponse", createRunResponseSchema);
  const AbortResponse = named("AbortResponse", abortResponseSchema);
  const RateChangeBody = named("RateChangeBody", rateChangeBodySchema);
  const RateChange = named("RateChange", rateChangeSchema);
  const RateChangeResponse = named("RateChangeResponse", rateChangeResponseSchema.extend({ change: RateChange, rateChanges: z.array(RateChange) }));
  const PlanYaml = named("PlanYaml", z.strictObject({ yaml: z.string().describe("The plan as a YAML (or JSON) document.") }));
  const ValidatePlanResponse = named("ValidatePlanResponse", z.object({ ok: z.literal(true), plan: Plan }));
  const ImportPlanBody = named("ImportPlanBody", importPlanBodySchema);
  const ImportPlanResponse = named("ImportPlanResponse", importPlanResponseSchema);
  const SavePlanBody = named(
    "SavePlanBody",
    savePlanBodySchema.safeExtend({
      plan: Plan.optional().describe("The plan as JSON; send this or `yaml`."),
      yaml: savePlanBodySchema.shape.yaml.describe(
        "The plan as YAML text; send this or `plan`. Kept exactly as written (comments, key order) and answered back as `yaml`.",
      ),
    }),
  );
  const writtenYaml = planRecordSchema.shape.yaml.describe(
    "The plan as its author wrote it in YAML (comments, key order, no defaults filled in); null when it was saved as JSON. `plan` is what runs.",
  );
  const PlanRecord = named("PlanRecord", planRecordSchema.extend({ plan: Plan, yaml: writtenYaml }));
  const PlanVersion = named("PlanVersion", planVersionSchema.extend({ plan: Plan, yaml: writtenYaml }));
  const ApiToken = named("ApiToken", apiTokenSchema);
  const CreateApiTokenBody = named("CreateApiTokenBody", createApiTokenBodySchema);
  const CreateApiTokenResponse = named("CreateApiTokenResponse", createApiTokenResponseSchema.extend({ token: ApiToken }));
  const Webhook = named("Webhook", webhookSchema);
  const CreateWebhookBody = named("CreateWebhookBody", createWebhookBodySchema);
  const CreateWebhookResponse = named("CreateWebhookResponse", createWebhookResponseSchema.extend({ webhook: Webhook }));
  // Only referenced by the webhook callback ($ref), which takes raw OpenAPI, not a schema.
  named(RUN_FINISHED_PAYLOAD, runFinishedPayloadSchema.extend({ run: runFinishedPayloadSchema.shape.run.extend({ summary: RunSummary.nullable() }) }));
  const AgentListItem = named("AgentListItem", agentListItemSchema);
  const AgentToken = named("AgentToken", agentTokenSchema);
  const CreateAgentTokenBody = named("CreateAgentTokenBody", createAgentTokenBodySchema);
  const CreateAgentTokenResponse = named("CreateAgentTokenResponse", createAgentTokenResponseSchema.extend({ token: AgentToken }));

  registry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API token (`vly_…`) from Settings → API tokens. Scope `read` reads runs and plans; `run` starts and stops runs and saves plans.",
  });
  registry.registerComponent("securitySchemes", "sessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "better-auth.session_token",
    description: "The web UI's session (sign in at /sign-in). Managing API tokens and agent join tokens needs a session of an org admin or owner.",
  });
  const sessionOnly = [{ sessionCookie: [] }];

  const jsonBody = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });
  // Every route but the document itself needs credentials, so 401, 403 and 429 are always possible.
  const errors = (...statuses: Status[]) =>
    Object.fromEntries([401, 403, 429, ...statuses].map((s) => [s, jsonBody(ApiError, errorStatusDescription(s as Status))]));
  const idParams = z.object({ id: z.string().describe("The run id returned by POST /api/v1/runs.") });
  const planParams = z.object({ id: z.string().describe("The plan id returned by POST /api/v1/plans.") });
  const noContent = (description: string) => ({ description });

  const paths: RouteConfig[] = [
    {
      method: "post",
      path: "/api/v1/runs",
      operationId: "createRun",
      tags: ["runs"],
      summary: "Queue a run of a plan",
      description: "Validates the plan and queues the run for a hub to execute. `Location` points at the new run.",
      request: { body: { required: true, content: { "application/json": { schema: CreateRunBody } } } },
      responses: { 201: jsonBody(CreateRunResponse, "The run is queued."), ...errors(400, 409, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs",
      operationId: "listRuns",
      tags: ["runs"],
      summary: "List recent runs, most recent first",
      request: {
        query: z.object({
          limit: z.number().int().min(1).max(500).default(50).optional().describe("How many runs, 1–500 (default 50)."),
          cursor: z.string().optional().describe("The `next` of the previous page: this page starts after it."),
          offset: z.number().int().min(0).default(0).optional().describe("How many to skip (default 0); not with cursor."),
          status: runStatusSchema.optional().describe("Only runs with this status."),
          planId: z.string().optional().describe("Only runs of this saved plan."),
          q: z.string().max(100).optional().describe("Only runs whose name or id contains this text (case-insensitive)."),
          tag: z.string().max(40).optional().describe("Only runs with this tag (PATCH /api/v1/runs/{id} sets tags)."),
          from: z
            .string()
            .optional()
            .describe("Only runs created at or after this date (2026-11-25, the start of that day UTC) or time (2026-11-25T14:00:00Z)."),
          to: z.string().optional().describe("Only runs created before this time; a date (2026-11-25) includes that whole day (UTC)."),
        }),
      },
      responses: { 200: jsonBody(z.object({ runs: z.array(RunListItem), next: NextCursor }), "The runs."), ...errors(400, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs/{id}",
      operationId: "getRun",
      tags: ["runs"],
      summary: "Get a run with its summary",
      description: `While the run is running the summary is computed live; poll until \`status\` is final. Statuses: ${meanings(runStatusSchema.options, RUN_STATUS_MEANINGS)}; final: ${FINAL_RUN_STATUSES.join(", ")}.`,
      request: { params: idParams },
      responses: { 200: jsonBody(Run, "The run."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs/{id}/intervals",
      operationId: "getRunIntervals",
      tags: ["runs"],
      summary: "Get the run timeline, one point per second",
      request: { params: idParams },
      responses: { 200: jsonBody(z.object({ intervals: z.array(IntervalPoint) }), "All shards merged per 1 s interval."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs/{id}/analysis",
      operationId: "getRunAnalysis",
      tags: ["runs"],
      summary: "Get the run's percentile spectra and per-agent breakdown",
      description:
        "`spectra` maps each histogram metric (message.latency, message.send_lag, ws.connect…) to its HdrHistogram percentile distribution in ms, merged over every shard (warm-up left out except for connect times). `agents` breaks counts, latency and health down per agent.",
      request: { params: idParams },
      responses: { 200: jsonBody(RunAnalysis, "The analysis."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs/{id}/junit",
      operationId: "getRunJunit",
      tags: ["runs"],
      summary: "Get the run as JUnit XML",
      description:
        "One testcase per threshold (a failure when it failed, naming the actual value) plus a `run completed` testcase that errors when the run errored, was aborted or ended degraded or inconclusive — what `volley run --junit` writes.",
      request: { params: idParams },
      responses: { 200: { description: "JUnit XML.", content: { "application/xml": { schema: z.string() } } }, ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs/{id}/report.html",
      operationId: "getRunReport",
      tags: ["runs"],
      summary: "Get the run as a self-contained HTML report",
      description:
        "One HTML document that opens offline and prints as shown: headline figures and every chart the run page shows as inline SVG (the timelines with the plan's thresholds drawn, a sweep's latency-vs-messages/s curve with a point per step, the percentile spectrum), the summary with error samples, thresholds, sweep steps, per-agent breakdown and the plan. Nothing is fetched (no script, stylesheet or font). Sent as a download; `inline=1` shows it in the browser instead.",
      request: {
        params: idParams,
        query: z.object({ inline: z.enum(["1"]).optional().describe("1: show in the browser (content-disposition inline) instead of downloading") }),
      },
      responses: { 200: { description: "The report.", content: { "text/html": { schema: z.string() } } }, ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs/{id}/intervals.csv",
      operationId: "getRunIntervalsCsv",
      tags: ["runs"],
      summary: "Get the merged timeline as CSV, one row per second",
      request: { params: idParams },
      responses: { 200: { description: "CSV with a header row.", content: { "text/csv": { schema: z.string() } } }, ...errors(404, 500, 503) },
    },
    {
      method: "post",
      path: "/api/v1/runs/{id}/abort",
      operationId: "abortRun",
      tags: ["runs"],
      summary: "Stop a run",
      description: "A queued run ends aborted at once (`abort: done`); a running one is stopped by the hub (`abort: requested`).",
      request: { params: idParams },
      responses: { 202: jsonBody(AbortResponse, "The abort is done or requested."), ...errors(404, 409, 500, 503) },
    },
    {
      method: "post",
      path: "/api/v1/runs/{id}/rate",
      operationId: "changeRunRate",
      tags: ["runs"],
      summary: "Change a running run's rate or connections",
      description:
        'Like Locust\'s live edit: `{"rate": 40}` sets the plan\'s `scenario.message.rate` (users: `arrivalRate`) to 40, `{"scale": 2}` doubles every rate of the plan (`{"scale": 1}` goes back to it), `{"connections": 200}` sets how many connections are open at once over every agent (more open at `connections.rate`, fewer retire the newest). Every agent applies it at one instant, a second after the request; the run records it (`rateChanges`) and its timeline marks it. 409 when the run is not running or the plan cannot change that while it runs (sweeps, connection stages, closed loops, exact request counts; connections also users plans, storms and reconnecting connections).',
      request: { params: idParams, body: { required: true, content: { "application/json": { schema: RateChangeBody } } } },
      responses: { 202: jsonBody(RateChangeResponse, "The change is recorded and sent to the agents."), ...errors(400, 403, 404, 409, 500, 503) },
    },
    {
      method: "post",
      path: "/api/v1/plans/validate",
      operationId: "validatePlan",
      tags: ["plans"],
      summary: "Validate a plan without running it",
      description: 'The body is a plan (JSON) or `{"yaml": "..."}`. Answers the plan with defaults filled in, or 400 naming every bad field.',
      request: { body: { required: true, content: { "application/json": { schema: z.union([Plan, PlanYaml]) } } } },
      responses: { 200: jsonBody(ValidatePlanResponse, "The plan is valid."), ...errors(400, 500) },
    },
    {
      method: "post",
      path: "/api/v1/plans/import",
      operationId: "importPlan",
      tags: ["plans"],
      summary: "Turn a browser recording (HAR) or an Artillery script into a plan",
      description:
        "`format: har`: a HAR saved from the browser's DevTools with its WebSocket messages (`_webSocketMessages`); `format: artillery`: an Artillery script whose scenario uses the `ws` or `socketio` engine, its payload CSVs in `files`. Answers the plan as YAML (nothing is saved) and notes on what to check; 400 names what makes the input unusable.",
      request: { body: { required: true, content: { "application/json": { schema: ImportPlanBody } } } },
      responses: { 200: jsonBody(ImportPlanResponse, "The imported plan and notes."), ...errors(400, 500) },
    },
    {
      method: "post",
      path: "/api/v1/plans",
      operationId: "createPlan",
      tags: ["plans"],
      summary: "Save a plan (version 1)",
      description:
        'The body is `{"plan": {...}}` (JSON) or `{"yaml": "..."}`; YAML is kept as written beside the validated plan, and 400 names a bad field inside it as `yaml.<path>`.',
      request: { body: { required: true, content: { "application/json": { schema: SavePlanBody } } } },
      responses: { 201: jsonBody(PlanRecord, "The saved plan. `Location` points at it."), ...errors(400, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/plans",
      operationId: "listPlans",
      tags: ["plans"],
      summary: "List saved plans, most recently changed first",
      request: {
        query: z.object({
          limit: z.number().int().min(1).max(500).default(50).optional().describe("How many plans, 1–500 (default 50); a page also ends at 1 MiB of plans."),
          cursor: z.string().optional().describe("The `next` of the previous page: this page starts after it."),
          offset: z.number().int().min(0).default(0).optional().describe("How many to skip (default 0); not with cursor."),
        }),
      },
      responses: { 200: jsonBody(z.object({ plans: z.array(PlanRecord), next: NextCursor }), "The plans."), ...errors(400, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/plans/{id}",
      operationId: "getPlan",
      tags: ["plans"],
      summary: "Get a saved plan (its latest version)",
      description:
        "Target credentials in the plan (credential headers, STOMP passcode, MQTT password, Socket.IO auth, URL passwords and tokens, password/token fields of request bodies and data) read as `••••••` in `plan` and `yaml` for viewers and tokens without the `run` scope; the same holds for plan lists, versions and runs.",
      request: { params: planParams },
      responses: { 200: jsonBody(PlanRecord, "The plan."), ...errors(404, 500, 503) },
    },
    {
      method: "put",
      path: "/api/v1/plans/{id}",
      operationId: "updatePlan",
      tags: ["plans"],
      summary: "Save a new version of a plan",
      description:
        'Replaces the plan\'s document (`{"plan"}` or `{"yaml"}`, as for createPlan); the previous versions stay readable at /versions. A credential sent back as `••••••` keeps its saved value (400 when nothing is saved at that place).',
      request: { params: planParams, body: { required: true, content: { "application/json": { schema: SavePlanBody } } } },
      responses: { 200: jsonBody(PlanRecord, "The plan at its new version."), ...errors(400, 404, 500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/plans/{id}",
      operationId: "deletePlan",
      tags: ["plans"],
      summary: "Delete a plan and its versions (its runs stay)",
      request: { params: planParams },
      responses: { 204: noContent("Deleted."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/plans/{id}/versions",
      operationId: "listPlanVersions",
      tags: ["plans"],
      summary: "Every saved version of a plan, oldest first",
      request: { params: planParams },
      responses: { 200: jsonBody(z.object({ versions: z.array(PlanVersion) }), "The versions."), ...errors(404, 500, 503) },
    },
    {
      method: "post",
      path: "/api/v1/tokens",
      operationId: "createApiToken",
      tags: ["tokens"],
      summary: "Create an API token (the secret is shown this once)",
      description: "Needs a session of an org admin or owner; an API token cannot create tokens.",
      security: sessionOnly,
      request: { body: { required: true, content: { "application/json": { schema: CreateApiTokenBody } } } },
      responses: { 201: jsonBody(CreateApiTokenResponse, "The token and its secret."), ...errors(400, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/tokens",
      operationId: "listApiTokens",
      tags: ["tokens"],
      summary: "List the organization's API tokens, newest first",
      security: sessionOnly,
      responses: { 200: jsonBody(z.object({ tokens: z.array(ApiToken) }), "The tokens, revoked ones with `revokedAt`."), ...errors(500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/tokens/{id}",
      operationId: "revokeApiToken",
      tags: ["tokens"],
      summary: "Revoke an API token; it stops working at once",
      security: sessionOnly,
      request: { params: z.object({ id: z.string().describe("The token id (`tok_…`).") }) },
      responses: { 204: noContent("Revoked."), ...errors(404, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/agents",
      operationId: "listAgents",
      tags: ["agents"],
      summary: "List the organization's agents with status and capacity",
      description: `\`status\` is one of ${meanings(agentStatusSchema.options, AGENT_STATUS_MEANINGS)}. Hubs record a heartbeat every 5 s; an agent not heard from for 30 s is \`offline\` whatever its hub last wrote (the hub may have died).`,
      responses: { 200: jsonBody(z.object({ agents: z.array(AgentListItem) }), "The agents, by name."), ...errors(500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/agents/{id}",
      operationId: "removeAgent",
      tags: ["agents"],
      summary: "Remove an offline agent from the organization's list",
      description:
        "For agents that are gone for good (a decommissioned machine). Refused with 409 while the agent carries a shard of a run or is connected: stop it (or revoke its join token) first. Runs it took part in keep their data. An agent that connects again after removal enrolls anew with its token. Needs a session of an org admin or owner.",
      security: sessionOnly,
      request: { params: z.object({ id: z.string().describe("The agent id (`agt_…`) from GET /api/v1/agents.") }) },
      responses: { 204: noContent("Removed."), ...errors(404, 409, 500, 503) },
    },
    {
      method: "post",
      path: "/api/v1/agent-tokens",
      operationId: "createAgentToken",
      tags: ["agents"],
      summary: "Create an agent join token (the secret is shown this once)",
      description: "Agents presenting the secret as AGENT_TOKEN join this organization, in the token's pool. Needs a session of an org admin or owner.",
      security: sessionOnly,
      request: { body: { required: true, content: { "application/json": { schema: CreateAgentTokenBody } } } },
      responses: { 201: jsonBody(CreateAgentTokenResponse, "The join token and its secret."), ...errors(400, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/agent-tokens",
      operationId: "listAgentTokens",
      tags: ["agents"],
      summary: "List the organization's agent join tokens, newest first",
      security: sessionOnly,
      responses: { 200: jsonBody(z.object({ tokens: z.array(AgentToken) }), "The join tokens, revoked ones with `revokedAt`."), ...errors(500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/agent-tokens/{id}",
      operationId: "revokeAgentToken",
      tags: ["agents"],
      summary: "Revoke an agent join token",
      description: "No agent can enrol with it any more, and agents that did are disconnected at their next heartbeat.",
      security: sessionOnly,
      request: { params: z.object({ id: z.string().describe("The join token id (`atk_…`).") }) },
      responses: { 204: noContent("Revoked."), ...errors(404, 500, 503) },
    },
    ...webhookPaths({ Webhook, CreateWebhookBody, CreateWebhookResponse, jsonBody, errors, noContent, sessionOnly }),
    ...comparePaths({ named, Run, PlanRecord, jsonBody, errors, noContent, sessionOnly }),
    ...metricsExportPaths({ named, jsonBody, errors, noContent, sessionOnly }),
    ...targetPaths({
      TargetHost: named("TargetHost", targetHostSchema),
      AddTargetHostBody: named("AddTargetHostBody", addTargetHostBodySchema),
      AuditEvent: named("AuditEvent", auditEventSchema),
      jsonBody,
      errors,
      noContent,
      sessionOnly,
    }),
    {
      method: "get",
      path: "/api/v1/openapi.json",
      operationId: "getOpenApi",
      tags: ["meta"],
      summary: "This OpenAPI 3.1 document",
      security: [],
      responses: {
        200: { description: "The OpenAPI document.", content: { "application/json": { schema: z.object({ openapi: z.string() }).passthrough() } } },
      },
    },
  ];
  // Every body is read through the size limit (body-limit.ts).
  for (const p of paths)
    registry.registerPath(p.request?.body ? { ...p, responses: { ...p.responses, 413: jsonBody(ApiError, errorStatusDescription(413)) } } : p);

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Volley API",
      version: "1",
      description:
        "Queue load-test runs of real-time servers, follow them and read their results. Authenticate with `Authorization: Bearer <API token>` (Settings → API tokens). Every error is `{ error: { code, message } }`.",
    },
    security: [{ bearerAuth: [] }, { sessionCookie: [] }],
    tags: [
      { name: "runs", description: "Runs of test plans" },
      { name: "plans", description: "Test plans" },
      { name: "tokens", description: "API tokens of the organization" },
      { name: "webhooks", description: "Signed notifications to your endpoints when runs end" },
      { name: "agents", description: "Load-generating agents and the join tokens that enrol them" },
      { name: "meta", description: "About the API" },
    ],
  });
}

export type OpenApiDocument = ReturnType<typeof build>;
let cached: OpenApiDocument | undefined;

/** The document; generated once per process (it depends only on the code). Callers must not mutate it. */
export function openApiDocument(): OpenApiDocument {
  cached ??= build();
  return cached;
}
