import type { IncomingMessage, ServerResponse } from "node:http";
import { timingSafeEqual } from "node:crypto";
import type { Queue } from "bullmq";
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { countAgentsByStatus, countRunsByStatus, type Db } from "@volley/db";

export interface HubMetricsDeps {
  db: Db;
  hubId: string;
  /** Queues whose job counts are exported, by name. */
  queues: Queue[];
  /** Agents with a live session on this replica. */
  connectedAgents(): number;
  /** Bearer token a scrape must present; null: /metrics answers anyone who can reach the hub port. */
  token: string | null;
}

/**
 * The hub's control-plane metrics in Prometheus' text format, at GET /metrics on the hub port:
 * runs by status and agents by status (install-wide, read from PostgreSQL at scrape time), queue
 * depth per BullMQ queue and state, frames stored by this replica, and the process' own metrics.
 * Per-run measurements go out through the org's remote-write export (run-metrics-exporter.ts).
 */
export class HubMetrics {
  readonly registry = new Registry();
  readonly framesStored: Counter;
  readonly remoteWrites: Counter<"outcome">;

  constructor(private readonly deps: HubMetricsDeps) {
    this.registry.setDefaultLabels({ hub: deps.hubId });
    collectDefaultMetrics({ register: this.registry, prefix: "volley_hub_" });
    this.framesStored = new Counter({
      name: "volley_hub_frames_stored_total",
      help: "Interval frames this hub's aggregator stored in PostgreSQL",
      registers: [this.registry],
    });
    this.remoteWrites = new Counter({
      name: "volley_hub_remote_writes_total",
      help: "Run-metric pushes to orgs' remote-write endpoints, by outcome",
      labelNames: ["outcome"],
      registers: [this.registry],
    });
    const { db, queues, connectedAgents } = deps;
    new Gauge({
      name: "volley_hub_runs",
      help: "Runs on the install by status",
      labelNames: ["status"],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { status, count } of await countRunsByStatus(db)) this.set({ status }, count);
      },
    });
    new Gauge({
      name: "volley_hub_agents",
      help: "Enrolled agents on the install by status",
      labelNames: ["status"],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { status, count } of await countAgentsByStatus(db)) this.set({ status }, count);
      },
    });
    new Gauge({
      name: "volley_hub_agents_connected",
      help: "Agents with a live session on this hub replica",
      registers: [this.registry],
      collect() {
        this.set(connectedAgents());
      },
    });
    new Gauge({
      name: "volley_hub_queue_jobs",
      help: "BullMQ jobs by queue and state",
      labelNames: ["queue", "state"],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const q of queues) {
          const counts = await q.getJobCounts("waiting", "active", "delayed", "failed", "prioritized", "waiting-children");
          for (const [state, n] of Object.entries(counts)) this.set({ queue: q.name, state }, n);
        }
      },
    });
  }

  /** Answers GET /metrics; false when the request is not for it. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.url !== "/metrics" || req.method !== "GET") return false;
    if (this.deps.token !== null && !bearerMatches(req.headers.authorization, this.deps.token)) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" }).end("GET /metrics needs Authorization: Bearer <HUB_METRICS_TOKEN>\n");
      return true;
    }
    this.registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": this.registry.contentType }).end(text),
      (err: unknown) => res.writeHead(503, { "content-type": "text/plain" }).end(`metrics unavailable: ${err instanceof Error ? err.message : String(err)}\n`),
    );
    return true;
  }
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.replace(/^Bearer\s+/i, "") ?? "");
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}
