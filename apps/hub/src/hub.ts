import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { AddressInfo } from "node:net";
import { pino, type Logger } from "pino";
import {
  checkDatabase,
  createDb,
  finishRun,
  getRunOfAnyOrg,
  markStaleAgentsOffline,
  migrateDatabase,
  sealStoredPlans,
  setAgentStatus,
  type SecretKeys,
} from "@volley/db";
import { checkRedis, createRedis, MAINTENANCE_QUEUE, openQueue, QUEUE_NAMES, scheduleRetention } from "@volley/queue";
import { Aggregator } from "./aggregator/aggregator";
import { RunCoordinator } from "./coordination/run-coordinator";
import { startAgentGateway } from "./gateway/agent-gateway";
import { DEFAULT_INGEST_LIMITS, type IngestLimits } from "./gateway/ingest-budget";
import { AgentRegistry, type AgentSession } from "./gateway/agent-registry";
import { LiveFeed } from "./runs/live-feed";
import { RunEvents } from "./runs/run-events";
import { RunWorker } from "./runs/run-worker";
import type { RunMeter } from "./runs/run-meter";
import { restateLateFrames } from "./runs/run-restatement";
import { AgentLine } from "./runs/agent-line";
import { PoolDispatcher } from "./shards/pool-dispatcher";
import { PoolDispatchers } from "./shards/pool-dispatchers";
import { ShardQueues } from "./shards/shard-queues";
import { ShardRunner } from "./shards/shard-runner";
import { errorMessage, settlesWithin } from "./util/wait";
import { WebhookDispatcher } from "./webhooks/webhook-dispatcher";
import { HubMetrics } from "./observability/hub-metrics";
import { RunMetricsExporter } from "./observability/run-metrics-exporter";
import { FINAL_RUN_STATUSES, type AgentStatus } from "@volley/contracts";
import type { ResolveAll } from "@volley/contracts/public-lookup";
import type { RetentionJob } from "@volley/contracts";
import { RetentionWorker } from "./retention/retention-worker";
import { WebhookWorker } from "./webhooks/webhook-worker";
import { startScheduleWorker } from "./schedules/schedule-worker";
import { DEFAULT_QUOTAS, type TargetPolicy } from "@volley/admission";

export interface HubConfig {
  databaseUrl: string;
  redisUrl: string;
  /** Shared bootstrap token for self-hosted agents; null/undefined: only join tokens (vat_…) admit agents. */
  agentToken?: string | null;
  host?: string;
  /** 0 picks a free port (tests). */
  port?: number;
  log?: Logger;
  /** Every shard must arm within this (default 30 s). */
  armTimeoutMs?: number;
  /** A dropped agent may reconnect within this before it is declared lost (default 10 s). */
  agentGraceMs?: number;
  /** Start instant = all armed + this (default 300 ms). */
  startLeadMs?: number;
  /** After the last shard.end, how long the wait for the frames to be stored may see no progress (default 15 s). */
  storeWaitMs?: number;
  /** Bound on that wait while frames are still being stored (default 120 s); frames landing later restate the run. */
  storeDeadlineMs?: number;
  /** Bound on an agent's shard.end after shard.abort (default 10 s). */
  abortEndTimeoutMs?: number;
  /** Margin past a plan's own end (plan-timing endByMs) before a shard that has not ended is stopped (default 30 s). */
  endSlackMs?: number;
  /** At shutdown, how long running runs may finish on their own before they are aborted (default 10 s). */
  shutdownGraceMs?: number;
  /** Runs one hub orchestrates at once, counting those waiting for agents (default 100; they mostly wait). */
  runConcurrency?: number;
  /** How often running runs' abortOnFail thresholds are checked (default 2 s). */
  thresholdCheckMs?: number;
  /** How often a started run looks for shards no live hub holds any more (default 2 s). */
  orphanCheckMs?: number;
  /** How long a shard's hold mark outlives the last refresh by its hub (default 15 s); a dead hub's marks lapse after this. */
  shardHoldTtlMs?: number;
  /** Web's origin (VOLLEY_PUBLIC_URL), for links to run pages in webhooks; absent: they carry none. */
  publicUrl?: string | null;
  /** First retry delay of webhook deliveries, doubling each attempt (default: the catalog's 2 s). */
  webhookRetryDelayMs?: number;
  /** A webhook receiver must answer within this (default 5 s). */
  webhookTimeoutMs?: number;
  /** Hosted: webhook deliveries (and agents' connections) reach only public addresses (default self-hosted). */
  mode?: "hosted" | "self-hosted";
  /**
   * What a schedule's firing checks before it starts a run, as web does for a run it queues
   * (VOLLEY_TARGET_ALLOWLIST, VOLLEY_QUOTA_*; `mode` above is VOLLEY_MODE). Default: loopback only, the default quotas.
   */
  targetPolicy?: Partial<Omit<TargetPolicy, "mode">>;
  /** The keys webhook secrets are sealed with (VOLLEY_SECRETS_KEY[_OLD]); null: stored unencrypted. */
  secretsKeys?: SecretKeys | null;
  /** How webhook hosts resolve in hosted mode (node:dns by default; tests answer for a name). */
  webhookResolveAll?: ResolveAll;
  /** Pools one org may have agents in on this hub at once (default 50); an agent announcing one more is refused. */
  maxPoolsPerOrg?: number;
  /** Pools all orgs of one owning account may have on this hub at once (default 50). */
  maxPoolsPerAccount?: number;
  /** Agents rows one join token (or the shared AGENT_TOKEN) may have (default 200); a hello adding one more is refused. */
  maxAgentsPerToken?: number;
  /** What agents' frames may cost this hub before an agent is cut off (HUB_INGEST_*); fields absent: DEFAULT_INGEST_LIMITS. */
  ingest?: Partial<IngestLimits>;
  /** A pool's shard worker and its Redis connection are released once the pool has had no agents this long (default 60 s). */
  poolReleaseMs?: number;
  /**
   * Bearer token GET /metrics requires (HUB_METRICS_TOKEN). null: open to whoever reaches the port in
   * self-hosted mode; hosted mode serves /metrics only with a token.
   */
  metricsToken?: string | null;
  /**
   * Retention of finished runs (RUN_FRAMES_RETENTION_DAYS, RUN_RETENTION_DAYS): registered as a
   * repeatable job run every `everyMs` (default 1 h) by whichever hub takes it. Absent: this hub
   * registers nothing (what another hub registered stays).
   */
  retention?: RetentionJob & { everyMs?: number };
}

export interface RunningHub {
  port: number;
  hubId: string;
  /** Pool keys this hub runs a shard worker for (each holds a Redis connection). */
  poolWorkers(): string[];
  close(): Promise<void>;
}

/**
 * Starts one hub replica: checks and migrates the database, then the agent gateway, the run
 * worker, a shard dispatcher per pool (on its first agent), the abort listener and the
 * aggregator. `close()` shuts down without losing rows: stop taking jobs, let running shards and
 * runs end (aborting them after a grace period), let the aggregator store what it read, then
 * close Socket.IO, Redis and the pool.
 */
export async function startHub(config: HubConfig): Promise<RunningHub> {
  const log = config.log ?? pino({ name: "hub" });
  await checkDatabase(config.databaseUrl);
  await checkRedis(config.redisUrl);
  await migrateDatabase(config.databaseUrl);

  const hubId = `hub-${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
  const timing = {
    armTimeoutMs: config.armTimeoutMs ?? 30_000,
    startLeadMs: config.startLeadMs ?? 300,
    storeWaitMs: config.storeWaitMs ?? 15_000,
    storeDeadlineMs: config.storeDeadlineMs ?? 120_000,
    abortEndTimeoutMs: config.abortEndTimeoutMs ?? 10_000,
    endSlackMs: config.endSlackMs ?? 30_000,
    thresholdCheckMs: config.thresholdCheckMs ?? 2000,
    agentGraceMs: config.agentGraceMs ?? 10_000,
    orphanCheckMs: config.orphanCheckMs ?? 2000,
  };
  const dbHandle = createDb(config.databaseUrl);
  const { db } = dbHandle;
  const connections = {
    commands: createRedis(config.redisUrl, { connectionName: `${hubId}:commands` }),
    subscriber: createRedis(config.redisUrl, { connectionName: `${hubId}:coord` }),
    adapterPub: createRedis(config.redisUrl, { connectionName: `${hubId}:adapter-pub` }),
    adapterSub: createRedis(config.redisUrl, { connectionName: `${hubId}:adapter-sub` }),
    bull: createRedis(config.redisUrl, { connectionName: `${hubId}:bullmq` }),
    reader: createRedis(config.redisUrl, { connectionName: `${hubId}:aggregator` }),
  };
  for (const [name, c] of Object.entries(connections)) c.on("error", (err) => log.warn({ connection: name, err: errorMessage(err) }, "redis connection error"));
  const redis = connections.commands;
  // A hub that crashed left its agents' rows online; only rows nobody has heartbeated lately, since
  // other replicas' agents are live (and lists judge staleness themselves anyway).
  // Plans stored before their credentials were sealed (migration 0020), or sealed under an old key: sealed now, once.
  const resealed = await sealStoredPlans(db, config.secretsKeys ?? null);
  if (resealed.sealed > 0 || resealed.unreadable > 0) log.info(resealed, "sealed the target credentials of stored plans");
  const staleAgents = await markStaleAgentsOffline(db);
  if (staleAgents > 0) log.info({ agents: staleAgents }, "marked agents not heard from lately offline");

  const liveFeed = new LiveFeed({ redis });
  // Each settled second of a run also goes to its org's Prometheus remote-write endpoint, if it set one.
  const exporter = new RunMetricsExporter({
    db,
    log,
    secretsKeys: config.secretsKeys ?? null,
    publicOnly: config.mode === "hosted",
    resolveAll: config.webhookResolveAll,
    onPush: (outcome) => metrics.remoteWrites.inc({ outcome }),
  });
  const events = new RunEvents({
    status: (event) => {
      liveFeed.status(event);
      if (FINAL_RUN_STATUSES.includes(event.status)) void exporter.finished(event.runId);
    },
    points: (runId, points) => {
      liveFeed.points(runId, points);
      exporter.points(runId, points);
    },
  });
  // The meters of the runs this hub supervises: its aggregator nudges one when it stored frames of that run.
  const meters = new Map<string, RunMeter>();
  const webhookQueue = openQueue(QUEUE_NAMES.webhooks, connections.bull);
  const webhooks = new WebhookDispatcher({ db, queue: webhookQueue, log, retryDelayMs: config.webhookRetryDelayMs, publicUrl: config.publicUrl ?? null });
  const coordinator = new RunCoordinator(redis, connections.subscriber, log, config.shardHoldTtlMs);
  const setStatus = (agentId: string, status: AgentStatus) =>
    void setAgentStatus(db, agentId, status).catch((err) => log.warn({ agentId, err: errorMessage(err) }, "could not update agent status"));
  const registry = new AgentRegistry({ graceMs: timing.agentGraceMs, log, onStatus: setStatus });
  registry.on("heartbeat", (s: { agentId: string; busy: boolean }) => setStatus(s.agentId, s.busy ? "busy" : "online"));
  const runner = new ShardRunner({
    db,
    registry,
    coordinator,
    log,
    armTimeoutMs: timing.armTimeoutMs,
    abortEndTimeoutMs: timing.abortEndTimeoutMs,
    endSlackMs: timing.endSlackMs,
    recordWaitMs: timing.storeDeadlineMs,
    secretsKeys: config.secretsKeys ?? null,
  });

  // Shards agents were running when they reconnected here after their hub restarted.
  const adoptions = new Set<Promise<void>>();
  registry.on("adopt", (session: AgentSession) => {
    const p = runner.adopt(session).finally(() => adoptions.delete(p));
    adoptions.add(p);
  });

  const dispatchers = new PoolDispatchers({
    create: (pool) => {
      // A shard waits for its planned agent a third of the arming time at most, so another agent can still arm it.
      const d = new PoolDispatcher({
        pool,
        hubId,
        connection: connections.bull,
        registry,
        runner,
        log,
        plannedAgentWaitMs: Math.min(3000, timing.armTimeoutMs / 3),
      });
      d.start();
      return d;
    },
    hasAgents: (pool) => registry.hasPool(pool),
    maxPoolsPerOrg: config.maxPoolsPerOrg ?? 50,
    maxPoolsPerAccount: config.maxPoolsPerAccount ?? 50,
    releaseAfterMs: config.poolReleaseMs ?? 60_000,
    log,
  });
  registry.on("pool", (pool: string) => dispatchers.ensure(pool));
  registry.on("vacated", (pool: string) => dispatchers.vacated(pool));

  // Aborts reach agents straight from here (< 1 s); a run still queued ends right away.
  coordinator.onAbort((runId, reason) => {
    runner.abortRun(runId, reason);
    void (async () => {
      const run = await getRunOfAnyOrg(db, runId);
      if (run?.status === "queued" && (await finishRun(db, runId, { status: "aborted", reason }))) {
        await events.status(runId, "aborted", reason);
        await webhooks.runFinished(runId);
        await coordinator.markFinalized(runId, "aborted");
        log.info({ runId, reason }, "queued run aborted");
      }
    })().catch((err) => log.error({ runId, err: errorMessage(err) }, "could not abort queued run"));
  });
  coordinator.onCancel((runId, reason) => runner.abortRun(runId, reason));
  coordinator.onRate(({ runId, scale, at, what }) => {
    const shards = runner.rateRun(runId, { scale, at, what });
    if (shards > 0) log.info({ runId, scale, at, what, shards }, "live change forwarded");
  });
  await coordinator.start();

  const queues = new ShardQueues(connections.bull);
  const line = new AgentLine({
    db,
    redis,
    coordinator,
    log,
    onIdle: (listener) => {
      registry.on("idle", listener);
      return () => registry.off("idle", listener);
    },
  });
  // Runs waiting in a pool's line hold a slot each (they only poll), so the default leaves room for a long line.
  const runWorker = new RunWorker({
    db,
    redis,
    coordinator,
    events,
    queues,
    log,
    timing,
    webhooks,
    line,
    meters,
    secretsKeys: config.secretsKeys ?? null,
    connection: connections.bull,
    concurrency: config.runConcurrency ?? 100,
  });
  const webhookWorker = new WebhookWorker({
    db,
    connection: connections.bull,
    log,
    timeoutMs: config.webhookTimeoutMs,
    publicOnly: config.mode === "hosted",
    secretsKeys: config.secretsKeys ?? null,
    resolveAll: config.webhookResolveAll,
  });
  const aggregator = new Aggregator({
    db,
    redis,
    reader: connections.reader,
    consumer: hubId,
    log,
    onStored: (runId, stored) => {
      metrics.framesStored.inc(stored);
      meters.get(runId)?.nudge();
    },
    beforeRetire: (runId) => restateLateFrames({ db, redis, events, log, webhooks }, runId),
  });

  const runsQueue = openQueue(QUEUE_NAMES.runs, connections.bull);
  const metrics = new HubMetrics({
    db,
    hubId,
    queues: [runsQueue, webhookQueue],
    connectedAgents: () => registry.all().length,
    token: config.metricsToken ?? null,
  });
  // Hosted: the hub port faces agents on the internet, so the install's counts need a token.
  const serveMetrics = config.mode !== "hosted" || Boolean(config.metricsToken);
  const httpServer = createServer((req, res) => {
    if (serveMetrics && metrics.handle(req, res)) return;
    // Socket.IO answers its own path; this is a liveness probe for orchestrators.
    if (req.url === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, hubId }));
      return;
    }
    res.writeHead(404).end();
  });
  const io = startAgentGateway({
    httpServer,
    db,
    redis,
    adapterPub: connections.adapterPub,
    adapterSub: connections.adapterSub,
    agentToken: config.agentToken,
    targetPolicy: { mode: config.mode ?? "self-hosted" },
    registry,
    log,
    admitPool: (org, pool) => dispatchers.admit(org, pool),
    maxAgentsPerToken: config.maxAgentsPerToken ?? 200,
    ingest: { ...DEFAULT_INGEST_LIMITS, ...config.ingest },
    recordStart: ({ runId, shardId, ...started }) => coordinator.markStarted(runId, shardId, started),
  });

  const maintenanceQueue = openQueue(MAINTENANCE_QUEUE, connections.bull);
  const retentionWorker = new RetentionWorker({ db, connection: connections.bull, log });
  if (config.retention) {
    const { everyMs, ...settings } = config.retention;
    await scheduleRetention(maintenanceQueue, settings, everyMs);
  }

  runWorker.start();
  webhookWorker.start();
  // Plans' cron schedules (BullMQ job schedulers web upserts): each firing becomes a queued run.
  const scheduleWorker = startScheduleWorker({
    db,
    connection: connections.bull,
    log,
    policy: {
      mode: config.mode ?? "self-hosted",
      allowlist: config.targetPolicy?.allowlist ?? [],
      quotas: config.targetPolicy?.quotas ?? DEFAULT_QUOTAS,
    },
  });
  retentionWorker.start();
  aggregator.start();
  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(config.port ?? 3001, config.host ?? "127.0.0.1", () => resolve());
  });
  const port = (httpServer.address() as AddressInfo).port;

  let closed: Promise<void> | null = null;
  async function shutdown(): Promise<void> {
    const pools = dispatchers.stopAll();
    const grace = config.shutdownGraceMs ?? 10_000;
    // 1. Take no new work; what runs may finish on its own for a while, then is aborted.
    //    (Waits on our own executions, not on BullMQ's close, which hangs while Redis is down.)
    const workerClosed = runWorker.close();
    await settlesWithin(Promise.all(pools.map((d) => d.stop())), 3000);
    const ourWork = () => Promise.all([runWorker.idle(), ...pools.map((d) => d.drained()), dispatchers.released(), ...adoptions]);
    if (!(await settlesWithin(ourWork(), grace))) {
      log.warn({ runs: runWorker.activeRuns().length, shards: runner.activeCount() }, "aborting runs still going at shutdown");
      await settlesWithin(runWorker.abortLocalRuns(redis, "hub shutting down"), 2000);
      runner.abortAll("hub shutting down");
      if (!(await settlesWithin(ourWork(), timing.abortEndTimeoutMs + timing.storeWaitMs + 5000))) log.error("runs did not end after abort; closing anyway");
    }
    // Each remaining step is bounded: with Redis or PostgreSQL gone, commands would otherwise wait forever.
    if (!(await settlesWithin(workerClosed, 3000))) await settlesWithin(runWorker.close(true), 2000);
    await settlesWithin(Promise.all(pools.map((d) => d.close())), 3000);
    // Runs have ended, so their deliveries are queued; one in flight gets its receiver's timeout, the rest wait in Redis for any hub.
    if (!(await settlesWithin(webhookWorker.close(), (config.webhookTimeoutMs ?? 5000) + 1000))) await settlesWithin(webhookWorker.close(true), 2000);
    await settlesWithin(webhookQueue.close(), 2000);
    await settlesWithin(runsQueue.close(), 2000);
    if (!(await settlesWithin(scheduleWorker.close(), 3000))) await settlesWithin(scheduleWorker.close(true), 2000);
    if (!(await settlesWithin(retentionWorker.close(), 3000))) await settlesWithin(retentionWorker.close(true), 2000);
    await settlesWithin(maintenanceQueue.close(), 2000);
    // 2. Everything read from the streams is stored and acked before the connections go.
    await settlesWithin(aggregator.stop(), 5000);
    await settlesWithin(new Promise<void>((resolve) => io.close(() => resolve())), 3000);
    registry.clear();
    await settlesWithin(queues.close(), 3000);
    await Promise.all(Object.values(connections).map(async (c) => (await settlesWithin(c.quit(), 2000)) || c.disconnect()));
    await settlesWithin(dbHandle.close(), 3000);
    log.info("hub stopped");
  }

  return {
    port,
    hubId,
    poolWorkers: () => dispatchers.pools(),
    close: () => (closed ??= shutdown()),
  };
}
