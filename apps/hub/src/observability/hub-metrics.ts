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
    // One read of each store per scrape, shared by the gauges that show it, each bounded in time.
    let reading: Promise<SourceReadings> | null = null;
    const unanswered = new Set<string>();
    const sources = () => {
      if (reading) return reading;
      const current = readSources(db, queues, unanswered);
      reading = current;
      // The scrape's collects run together; the next scrape reads again.
      void current.finally(() => setImmediate(() => reading === current && (reading = null)));
      return current;
    };
    new Gauge({
      name: "volley_hub_runs",
      help: "Runs on the install by status",
      labelNames: ["status"],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { status, count } of (await sources()).runs ?? []) this.set({ status }, count);
      },
    });
    new Gauge({
      name: "volley_hub_agents",
      help: "Enrolled agents on the install by status",
      labelNames: ["status"],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { status, count } of (await sources()).agents ?? []) this.set({ status }, count);
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
        for (const [queue, counts] of (await sources()).queues ?? []) for (const [state, n] of Object.entries(counts)) this.set({ queue, state }, n);
      },
    });
    new Gauge({
      name: "volley_hub_source_up",
      help: `Whether a store the hub's gauges read answered this scrape within ${SOURCE_TIMEOUT_MS} ms (1) or not (0: its gauges are left out, the rest still answer)`,
      labelNames: ["source"],
      registers: [this.registry],
      async collect() {
        const s = await sources();
        this.set({ source: "postgres" }, s.runs && s.agents ? 1 : 0);
        this.set({ source: "redis" }, s.queues ? 1 : 0);
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

/** How long a scrape waits for PostgreSQL or Redis: a frozen store must not freeze /metrics with it. */
const SOURCE_TIMEOUT_MS = 2_000;

interface SourceReadings {
  runs: Awaited<ReturnType<typeof countRunsByStatus>> | null;
  agents: Awaited<ReturnType<typeof countAgentsByStatus>> | null;
  queues: Array<[string, Record<string, number>]> | null;
}

/** Reads the stores the gauges show, each within SOURCE_TIMEOUT_MS; null for one that failed or did not answer in time. */
async function readSources(db: Db, queues: Queue[], unanswered: Set<string>): Promise<SourceReadings> {
  const [runs, agents, queueCounts] = await Promise.all([
    within(unanswered, "runs", () => countRunsByStatus(db)),
    within(unanswered, "agents", () => countAgentsByStatus(db)),
    within(unanswered, "queues", () =>
      Promise.all(
        queues.map(
          async (q) =>
            [q.name, await q.getJobCounts("waiting", "active", "delayed", "failed", "prioritized", "waiting-children")] as [string, Record<string, number>],
        ),
      ),
    ),
  ]);
  return { runs, agents, queues: queueCounts };
}

/** `unanswered`: reads of an earlier scrape still pending, not asked again until they settle, so a frozen store does not pile them up. */
async function within<T>(unanswered: Set<string>, what: string, read: () => Promise<T>): Promise<T | null> {
  if (unanswered.has(what)) return null;
  let timer: NodeJS.Timeout | undefined;
  const pending = read().finally(() => unanswered.delete(what));
  unanswered.add(what);
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), SOURCE_TIMEOUT_MS)));
  return Promise.race([pending.catch(() => null), late]).finally(() => clearTimeout(timer));
}
