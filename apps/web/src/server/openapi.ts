import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import {
  apiErrorSchema,
  createRunBodySchema,
  createRunResponseSchema,
  intervalPointSchema,
  planSchema,
  runSchema,
  runStatusSchema,
  runSummarySchema,
  runAnalysisSchema,
} from "@volley/contracts";
import { z } from "zod";
import type { AbortResponse, RunListItem } from "../lib/types";

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
      sent: z.number().int(),
      received: z.number().int(),
      lost: z.number().int(),
      p50: z.number().nullable(),
      p95: z.number().nullable(),
      p99: z.number().nullable(),
    })
    .nullable(),
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
  { method: "post", path: "/api/v1/runs/{id}/abort" },
  { method: "post", path: "/api/v1/plans/validate" },
  { method: "get", path: "/api/v1/openapi.json" },
] as const;

type Status = 400 | 404 | 409 | 500 | 503;
const ERROR_DESCRIPTIONS: Record<Status, string> = {
  400: "Invalid request: `invalid_json`, `invalid_body` (with `issues` naming every bad field) or `invalid_query`.",
  404: "`not_found`: the run does not exist.",
  409: "`conflict`: the run has already ended.",
  500: "`misconfigured` (a server variable is missing or wrong; the message says how to fix it) or `internal`.",
  503: "`unavailable`: PostgreSQL or Redis is unreachable.",
};

function build() {
  const registry = new OpenAPIRegistry();
  const named = <T extends z.ZodType>(name: string, schema: T): T => registry.register(name, schema.clone());

  const Plan = named("Plan", planSchema);
  const ApiError = named("ApiError", apiErrorSchema);
  const RunSummary = named("RunSummary", runSummarySchema);
  // Re-point the nested fields at the named components so the document references them, not copies.
  const Run = named("Run", runSchema.extend({ plan: Plan, summary: RunSummary.nullable() }));
  const IntervalPoint = named("IntervalPoint", intervalPointSchema);
  const RunListItem = named("RunListItem", runListItemSchema);
  const RunAnalysis = named("RunAnalysis", runAnalysisSchema);
  const CreateRunBody = named("CreateRunBody", createRunBodySchema.extend({ plan: Plan }));
  const CreateRunResponse = named("CreateRunResponse", createRunResponseSchema);
  const AbortResponse = named("AbortResponse", abortResponseSchema);
  const PlanYaml = named("PlanYaml", z.strictObject({ yaml: z.string().describe("The plan as a YAML (or JSON) document.") }));
  const ValidatePlanResponse = named("ValidatePlanResponse", z.object({ ok: z.literal(true), plan: Plan }));

  const jsonBody = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });
  const errors = (...statuses: Status[]) =>
    Object.fromEntries(statuses.map((s) => [s, jsonBody(ApiError, ERROR_DESCRIPTIONS[s])]));
  const idParams = z.object({ id: z.string().describe("The run id returned by POST /api/v1/runs.") });

  const paths: RouteConfig[] = [
    {
      method: "post",
      path: "/api/v1/runs",
      operationId: "createRun",
      tags: ["runs"],
      summary: "Queue a run of a plan",
      description: "Validates the plan and queues the run for a hub to execute. `Location` points at the new run.",
      request: { body: { required: true, content: { "application/json": { schema: CreateRunBody } } } },
      responses: { 201: jsonBody(CreateRunResponse, "The run is queued."), ...errors(400, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs",
      operationId: "listRuns",
      tags: ["runs"],
      summary: "List recent runs, most recent first",
      request: { query: z.object({ limit: z.number().int().min(1).max(500).default(50).optional().describe("How many runs, 1–500 (default 50).") }) },
      responses: { 200: jsonBody(z.object({ runs: z.array(RunListItem) }), "The runs."), ...errors(400, 500, 503) },
    },
    {
      method: "get",
      path: "/api/v1/runs/{id}",
      operationId: "getRun",
      tags: ["runs"],
      summary: "Get a run with its summary",
      description: "While the run is running the summary is computed live; poll until `status` is final (passed, failed, errored, aborted).",
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
      description: "`spectra` maps each histogram metric (message.latency, message.send_lag, ws.connect…) to its HdrHistogram percentile distribution in ms, merged over every shard (warm-up left out except for connect times). `agents` breaks counts, latency and health down per agent.",
      request: { params: idParams },
      responses: { 200: jsonBody(RunAnalysis, "The analysis."), ...errors(404, 500, 503) },
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
      path: "/api/v1/plans/validate",
      operationId: "validatePlan",
      tags: ["plans"],
      summary: "Validate a plan without running it",
      description: "The body is a plan (JSON) or `{\"yaml\": \"...\"}`. Answers the plan with defaults filled in, or 400 naming every bad field.",
      request: { body: { required: true, content: { "application/json": { schema: z.union([Plan, PlanYaml]) } } } },
      responses: { 200: jsonBody(ValidatePlanResponse, "The plan is valid."), ...errors(400, 500) },
    },
    {
      method: "get",
      path: "/api/v1/openapi.json",
      operationId: "getOpenApi",
      tags: ["meta"],
      summary: "This OpenAPI 3.1 document",
      responses: { 200: { description: "The OpenAPI document.", content: { "application/json": { schema: z.object({ openapi: z.string() }).passthrough() } } } },
    },
  ];
  for (const p of paths) registry.registerPath(p);

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Volley API",
      version: "1",
      description: "Queue load-test runs of real-time servers, follow them and read their results. Every error is `{ error: { code, message } }`.",
    },
    tags: [
      { name: "runs", description: "Runs of test plans" },
      { name: "plans", description: "Test plans" },
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
