import { z } from "zod";
import type { IntervalPoint } from "./run";

/**
 * Live run metrics out to the tools operators already run: each org may name one Prometheus
 * remote-write endpoint (Prometheus with --web.enable-remote-write-receiver, Grafana Cloud / Mimir,
 * VictoriaMetrics, Thanos receive, AWS AMP behind a proxy…). The supervising hub pushes every second
 * of every run of the org once it has settled, with the series below; infra/grafana/volley-run.json
 * draws them like the run page does.
 */

export const METRICS_EXPORT_KINDS = ["prometheus-remote-write"] as const;

export const putMetricsExportBodySchema = z.strictObject({
  kind: z.enum(METRICS_EXPORT_KINDS, { error: 'use "prometheus-remote-write"' }).default("prometheus-remote-write"),
  url: z
    .url({ protocol: /^https?$/, error: "give the remote-write endpoint as an http:// or https:// URL, like https://prometheus.example.com/api/v1/write" })
    .max(2000, "keep the URL under 2000 characters"),
  /**
   * The whole Authorization header value ("Bearer …", "Basic …"), stored sealed like webhook
   * secrets. Omit it to keep the one already stored; null removes it.
   */
  authorization: z.string().min(1).max(4096, "keep the Authorization header under 4096 characters").nullable().optional(),
  /** Labels added to every series (e.g. `{ env: "staging" }`); names as Prometheus allows. */
  labels: z
    .record(z.string(), z.string().max(200, "keep label values under 200 characters"))
    .refine((l) => Object.keys(l).length <= 10, "at most 10 extra labels")
    .superRefine((l, ctx) => {
      for (const k of Object.keys(l)) {
        if (k.startsWith("__") || RESERVED_LABELS.includes(k))
          ctx.addIssue({
            code: "custom",
            message: `"${k}" is set by Volley (run_id, run_name, plan_id, org, quantile, job, instance and names starting with __): pick another name`,
          });
        else if (!/^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/.test(k))
          ctx.addIssue({ code: "custom", message: `"${k}" is no Prometheus label name: use letters, digits and _ (at most 64), not starting with a digit` });
      }
    })
    .default({}),
  enabled: z.boolean().default(true),
});
export type PutMetricsExportBody = z.infer<typeof putMetricsExportBodySchema>;

export const metricsExportSchema = z.object({
  kind: z.enum(METRICS_EXPORT_KINDS),
  url: z.string(),
  /** Whether an Authorization header is stored (it is never shown again). */
  hasAuthorization: z.boolean(),
  labels: z.record(z.string(), z.string()),
  enabled: z.boolean(),
  updatedAt: z.string(),
  /** The last push: when, the receiver's HTTP status (0: no answer) and its error text. */
  lastPushAt: z.string().nullable(),
  lastStatus: z.number().int().nullable(),
  lastError: z.string().nullable(),
});
export type MetricsExport = z.infer<typeof metricsExportSchema>;

const RESERVED_LABELS = ["run_id", "run_name", "plan_id", "org", "quantile", "job", "instance"];

/** One series of a run as pushed: a Prometheus metric name, its help text, and its value in a second. */
interface RunSeries {
  name: string;
  help: string;
  labels?: Record<string, string>;
  value(p: IntervalPoint): number | null;
}

/** Latencies are exported in seconds (Prometheus base units); a second with no reply has no latency sample. */
const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/**
 * Every series a run exports, per second of the run (timestamp: the interval's start). Rates are
 * per second because each point is one second; latency quantiles come from the merged HdrHistogram
 * of all agents, never averaged.
 */
export const RUN_SERIES: readonly RunSeries[] = [
  { name: "volley_run_connections", help: "Open connections at the end of the second (all agents)", value: (p) => p.connections },
  { name: "volley_run_messages_sent_per_second", help: "Messages sent in the second", value: (p) => p.sent },
  { name: "volley_run_messages_received_per_second", help: "Replies received in the second", value: (p) => p.received },
  { name: "volley_run_errors_per_second", help: "Errors in the second (all classes)", value: (p) => p.errors },
  { name: "volley_run_lost_per_second", help: "Messages whose reply did not come within the message timeout", value: (p) => p.lost },
  { name: "volley_run_disconnects_per_second", help: "Connections closed in the second", value: (p) => p.disconnects },
  { name: "volley_run_connect_failed_per_second", help: "Connection attempts that failed in the second", value: (p) => p.connectFailed },
  {
    name: "volley_run_latency_seconds",
    help: "Message latency from intended send time, merged across agents",
    labels: { quantile: "0.5" },
    value: (p) => seconds(p.p50),
  },
  {
    name: "volley_run_latency_seconds",
    help: "Message latency from intended send time, merged across agents",
    labels: { quantile: "0.95" },
    value: (p) => seconds(p.p95),
  },
  {
    name: "volley_run_latency_seconds",
    help: "Message latency from intended send time, merged across agents",
    labels: { quantile: "0.99" },
    value: (p) => seconds(p.p99),
  },
  {
    name: "volley_run_latency_seconds",
    help: "Message latency from intended send time, merged across agents",
    labels: { quantile: "1" },
    value: (p) => seconds(p.max),
  },
  { name: "volley_run_agent_cpu_percent", help: "Busiest agent's CPU, % of one core", value: (p) => p.health.cpu },
  { name: "volley_run_agent_send_lag_seconds", help: "Worst agent send lag (actual minus intended send time)", value: (p) => seconds(p.health.sendLagMs) },
  {
    name: "volley_run_saturated",
    help: "1 when an agent flagged the second saturated (the load generator, not the server, was the limit)",
    value: (p) => (p.saturated ? 1 : 0),
  },
];

export const RUN_SERIES_NAMES: readonly string[] = [...new Set(RUN_SERIES.map((s) => s.name))];
