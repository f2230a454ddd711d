import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { metricsExportSchema, putMetricsExportBodySchema, RUN_SERIES_NAMES } from "@volley/contracts";
import { z } from "zod";
import type { Status } from "./openapi";

type Content = { description: string; content: { "application/json": { schema: z.ZodType } } };

/** The metrics-export part of the OpenAPI document (openapi.ts builds the rest). */
export function metricsExportPaths(c: {
  named: <T extends z.ZodType>(name: string, schema: T) => T;
  jsonBody: (schema: z.ZodType, description: string) => Content;
  errors: (...statuses: Status[]) => Record<string, Content>;
  noContent: (description: string) => { description: string };
  sessionOnly: Record<string, string[]>[];
}): RouteConfig[] {
  const { named, jsonBody, errors, noContent, sessionOnly } = c;
  const MetricsExport = named("MetricsExport", metricsExportSchema);
  const PutMetricsExportBody = named("PutMetricsExportBody", putMetricsExportBodySchema);
  const series = RUN_SERIES_NAMES.map((n) => `\`${n}\``).join(", ");
  return [
    {
      method: "get",
      path: "/api/v1/metrics-export",
      operationId: "getMetricsExport",
      tags: ["metrics export"],
      summary: "The organization's live run-metrics export (Prometheus remote-write), never its Authorization header",
      security: sessionOnly,
      responses: { 200: jsonBody(z.object({ metricsExport: MetricsExport.nullable() }), "The export, or null when none is set."), ...errors(500, 503) },
    },
    {
      method: "put",
      path: "/api/v1/metrics-export",
      operationId: "putMetricsExport",
      tags: ["metrics export"],
      summary: "Push every run's live metrics to a Prometheus remote-write endpoint",
      description: `The hub supervising each of the organization's runs pushes every second of it, once settled (2 s behind the newest) and the rest when it ends, each exactly once, timestamped at the interval's start. Series: ${series}, labelled \`run_id\`, \`run_name\`, \`plan_id\`, \`org\` and the labels given here; latency quantiles come from the merged HdrHistogram of all agents. \`infra/grafana/volley-run.json\` is a Grafana dashboard for them. A failing receiver is recorded in \`lastStatus\`/\`lastError\` and never affects a run. In hosted mode the endpoint must be a public address. Needs a session of an org admin or owner.`,
      security: sessionOnly,
      request: { body: { required: true, content: { "application/json": { schema: PutMetricsExportBody } } } },
      responses: { 200: jsonBody(z.object({ metricsExport: MetricsExport }), "The export as stored."), ...errors(400, 500, 503) },
    },
    {
      method: "delete",
      path: "/api/v1/metrics-export",
      operationId: "deleteMetricsExport",
      tags: ["metrics export"],
      summary: "Stop pushing run metrics",
      security: sessionOnly,
      responses: { 204: noContent("Removed."), ...errors(404, 500, 503) },
    },
  ];
}
