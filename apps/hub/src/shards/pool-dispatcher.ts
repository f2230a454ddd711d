import { Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { QUEUE_NAMES, shardJob } from "@volley/queue";
import type { AgentRegistry } from "../gateway/agent-registry";
import { errorMessage, sleep } from "../util/wait";
import type { ShardRunner } from "./shard-runner";

export interface PoolDispatcherOptions {
  pool: string;
  hubId: string;
  /** Shared command connection; BullMQ duplicates it for its blocking fetch. */
  connection: Redis;
  registry: AgentRegistry;
  runner: ShardRunner;
  log: Logger;
  /** Job lock, renewed every third of it while an agent holds the shard. */
  lockMs?: number;
  /** How long after its creation a shard sized for one agent waits for that agent before any idle one may take it. */
  plannedAgentWaitMs?: number;
}

/** How long a shard sized for an agent not idle here is put back before a hub looks at it again. */
const PLANNED_AGENT_RETRY_MS = 200;

/**
 * The BullMQ worker of one pool's shard queue on this hub, taking exactly as many jobs as there
 * are idle connected agents in the pool.
 *
 * Why manual fetching rather than a processor with `worker.concurrency = idle agents`: BullMQ's
 * main loop only re-reads its concurrency when an active job finishes, so an agent connecting
 * while every slot holds a long shard would sit idle until that shard ended (measured with
 * bullmq 5.81). Here one fetch loop asks for a job only while an agent is idle (no agents = no
 * fetching, the equivalent of a paused worker), hands each job to an agent at once, and renews
 * the job's lock itself while the agent runs it.
 *
 * A shard sized for one agent (its job's `agentId`, from the planner's capacity split) goes to that
 * agent; a hub where it is not idle puts the job back for a moment, since the agent may be held by
 * another replica, and only after `plannedAgentWaitMs` may any idle agent take it.
 */
export class PoolDispatcher {
  private readonly worker: Worker;
  private readonly stopFetching = new AbortController();
  private readonly inflight = new Set<Promise<void>>();
  private loop: Promise<void> | null = null;
  private tokens = 0;

  constructor(private readonly opts: PoolDispatcherOptions) {
    this.worker = new Worker(QUEUE_NAMES.shards(opts.pool), null, {
      connection: opts.connection,
      autorun: false,
      lockDuration: opts.lockMs ?? 30_000,
      // Seconds a blocking fetch waits for a job; short so shutdown is not held up by it.
      drainDelay: 1,
      // A shard whose hub died is failed, never handed to a second agent: that would send its load twice.
      maxStalledCount: 0,
    });
    this.worker.on("error", (err) => opts.log.error({ pool: opts.pool, err: errorMessage(err) }, "shard worker error"));
  }

  start(): void {
    // Moves shards of a crashed hub (lock not renewed) back to the queue.
    void this.worker.startStalledCheckTimer().catch((err) => this.opts.log.error({ err: errorMessage(err) }, "stalled check failed"));
    this.loop = this.fetchLoop();
  }

  private async fetchLoop(): Promise<void> {
    const { registry, pool, log } = this.opts;
    const signal = this.stopFetching.signal;
    while (!signal.aborted) {
      if (registry.idleCount(pool) === 0) {
        await registry.waitIdle(pool, signal);
        continue;
      }
      const token = `${this.opts.hubId}:${pool}:${this.tokens++}`;
      let job: Job | undefined;
      try {
        job = await this.worker.getNextJob(token, { block: true });
      } catch (err) {
        if (signal.aborted) break;
        log.error({ pool, err: errorMessage(err) }, "could not fetch a shard job; retrying");
        await sleep(1000, signal);
        continue;
      }
      if (!job) continue;
      const p = this.process(job, token);
      this.inflight.add(p);
      void p.finally(() => this.inflight.delete(p));
    }
  }

  private async process(job: Job, token: string): Promise<void> {
    const { registry, pool, log, runner } = this.opts;
    // Taken before the first await so the fetch loop's next idle count already excludes it.
    const planned = plannedAgent(job);
    let session = planned ? registry.takeIdle(pool, planned) : null;
    if (planned && !session) {
      const waited = Date.now() - job.timestamp;
      if (waited < (this.opts.plannedAgentWaitMs ?? 3000)) {
        // The shard was sized for an agent that is not idle on this hub: another replica may hold it,
        // or it is just finishing a shard. Put the job back briefly so that agent's hub can take it;
        // the delay keeps this hub from fetching it again at once.
        await job
          .moveToDelayed(Date.now() + PLANNED_AGENT_RETRY_MS, token)
          .catch((err) => log.error({ jobId: job.id, err: errorMessage(err) }, "could not put back shard job"));
        return;
      }
      // Better a run on the agents there are than a run that never arms: the split by capacity is best effort.
      log.info({ jobId: job.id, pool, plannedAgentId: planned, waitedMs: waited }, "planned agent did not take its shard in time; giving it to any idle agent");
    }
    session ??= registry.takeIdle(pool);
    if (!session) {
      // The idle agent left while the job was being fetched; give another one a moment.
      const patience = AbortSignal.timeout(2000);
      await registry.waitIdle(pool, patience);
      session = registry.takeIdle(pool);
      if (!session) {
        await job.moveToWait(token).catch((err) => log.error({ jobId: job.id, err: errorMessage(err) }, "could not requeue shard job"));
        return;
      }
    }
    const lockMs = this.opts.lockMs ?? 30_000;
    const renew = setInterval(() => {
      job.extendLock(token, lockMs).catch((err) => log.error({ jobId: job.id, err: errorMessage(err) }, "could not renew shard job lock"));
    }, lockMs / 3);
    try {
      const data = shardJob.schema.parse(job.data);
      const ended = await runner.run(data, session);
      await job.moveToCompleted(ended, token, false);
    } catch (err) {
      log.warn({ jobId: job.id, err: errorMessage(err) }, "shard job failed");
      await job
        .moveToFailed(err instanceof Error ? err : new Error(String(err)), token, false)
        .catch((e) => log.error({ jobId: job.id, err: errorMessage(e) }, "could not fail shard job"));
    } finally {
      clearInterval(renew);
    }
  }

  activeCount(): number {
    return this.inflight.size;
  }

  /** Stops taking jobs; shards already running carry on. */
  async stop(): Promise<void> {
    this.stopFetching.abort();
    await this.loop;
  }

  /** Resolves once every shard this dispatcher holds has ended. */
  async drained(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  async close(): Promise<void> {
    await this.stop();
    await this.worker.close(true);
  }
}

/** The agent a shard job was sized for, if any (read before validation: jobs of older hubs lack it). */
function plannedAgent(job: Job): string | null {
  const id = (job.data as { agentId?: unknown } | undefined)?.agentId;
  return typeof id === "string" && id.length > 0 ? id : null;
}
