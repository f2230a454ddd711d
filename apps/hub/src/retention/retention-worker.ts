import { Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { RetentionJob } from "@volley/contracts";
import { deleteAgentsNotSeenSince, deleteRunsEndedBefore, pruneRunFrames, type Db } from "@volley/db";
import { MAINTENANCE_QUEUE, retentionJob } from "@volley/queue";
import { errorMessage } from "../util/wait";

const DAY_MS = 86_400_000;

/** What one retention pass removed. */
export interface RetentionResult {
  prunedRuns: number;
  deletedFrames: number;
  deletedRuns: number;
  /** Agent rows not heard from within agentsDays (present only when agentsDays is set). */
  deletedAgents?: number;
}

/**
 * One retention pass: whole runs that ended more than `runsDays` ago, then the raw frames of runs
 * that ended more than `framesDays` ago (the merged rows stay, so the run page and API answer as
 * before; a run from before the meter, without merged rows, keeps its frames). In batches, so a first pass over a large backlog never holds one huge transaction.
 */
export async function applyRetention(db: Db, settings: RetentionJob, now = Date.now()): Promise<RetentionResult> {
  const result: RetentionResult = { prunedRuns: 0, deletedFrames: 0, deletedRuns: 0 };
  if (settings.runsDays !== null) {
    const before = new Date(now - settings.runsDays * DAY_MS);
    for (;;) {
      const deleted = await deleteRunsEndedBefore(db, before);
      result.deletedRuns += deleted.length;
      if (deleted.length === 0) break;
    }
  }
  if (settings.framesDays !== null) {
    const before = new Date(now - settings.framesDays * DAY_MS);
    for (;;) {
      const pruned = await pruneRunFrames(db, before);
      result.prunedRuns += pruned.runs.length;
      result.deletedFrames += pruned.frames;
      if (pruned.runs.length === 0) break;
    }
  }
  if (settings.agentsDays !== undefined && settings.agentsDays !== null) {
    const before = new Date(now - settings.agentsDays * DAY_MS);
    result.deletedAgents = 0;
    for (;;) {
      const deleted = await deleteAgentsNotSeenSince(db, before);
      result.deletedAgents += deleted.length;
      if (deleted.length === 0) break;
    }
  }
  return result;
}

/** The BullMQ worker of the maintenance queue (handler of `retentionJob`, which the hubs' job scheduler emits). */
export class RetentionWorker {
  private readonly worker: Worker;

  constructor(private readonly deps: { db: Db; connection: Redis; log: Logger }) {
    this.worker = new Worker(MAINTENANCE_QUEUE, (job) => this.process(job), { connection: deps.connection, concurrency: 1, autorun: false });
    this.worker.on("error", (err) => deps.log.error({ err: errorMessage(err) }, "retention worker error"));
    this.worker.on("failed", (job, err) => deps.log.warn({ jobId: job?.id, attempt: job?.attemptsMade, err: errorMessage(err) }, "retention pass failed"));
  }

  start(): void {
    void this.worker.run().catch((err) => this.deps.log.error({ err: errorMessage(err) }, "retention worker stopped"));
  }

  private async process(job: Job): Promise<RetentionResult> {
    const settings = retentionJob.schema.parse(job.data);
    const result = await applyRetention(this.deps.db, settings);
    if (result.prunedRuns + result.deletedRuns + (result.deletedAgents ?? 0) > 0)
      this.deps.log.info({ ...settings, ...result }, "retention pass removed old run data");
    return result;
  }

  close(force = false): Promise<void> {
    return this.worker.close(force);
  }
}
