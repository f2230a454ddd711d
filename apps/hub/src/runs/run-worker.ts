import { DelayedError, Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import { abortRequestSchema, REDIS_KEYS } from "@volley/contracts";
import { getRunOfAnyOrg, finishRun } from "@volley/db";
import { QUEUE_NAMES, runJob } from "@volley/queue";
import { errorMessage, seconds, sleep, withTimeout } from "../util/wait";
import { rawError, runErrorReason } from "./run-error-reason";
import { RunExecution, runDeadlineMs, type RunExecutionDeps } from "./run-execution";

/**
 * The BullMQ worker of the runs queue (handler of `runJob`). Each job is one RunExecution, bounded
 * by a deadline computed from its plan, so a run job can never hang: past it, the run ends
 * `errored` and its shards are cancelled.
 */
export class RunWorker {
  private readonly worker: Worker;
  private readonly running = new Map<string, RunExecution>();
  /** Runs still in their pool's line (not started: a shutdown must not abort them, only hand them back). */
  private readonly waiting = new Set<string>();
  /** Fired at close(): runs waiting for agents put their jobs back for another hub. */
  private readonly stopWaiting = new AbortController();

  constructor(private readonly deps: RunExecutionDeps & { connection: Redis; concurrency: number }) {
    this.worker = new Worker(QUEUE_NAMES.runs, (job, token) => this.process(job, token, runJob.schema.parse(job.data).runId, job.stalledCounter > 0), {
      connection: deps.connection,
      concurrency: deps.concurrency,
      autorun: false,
      // A run job only awaits (its event loop is never blocked for long), so a short lock is safe,
      // and it bounds how long a run whose hub died goes unsupervised: 15–30 s instead of 30–60 s.
      lockDuration: 15_000,
      stalledInterval: 15_000,
    });
    this.worker.on("error", (err) => deps.log.error({ err: errorMessage(err) }, "run worker error"));
    this.worker.on("failed", (job, err) => deps.log.error({ runId: job?.data?.runId, err: errorMessage(err) }, "run job failed"));
  }

  start(): void {
    void this.worker.run().catch((err) => this.deps.log.error({ err: errorMessage(err) }, "run worker stopped"));
  }

  private async process(job: Job, token: string | undefined, runId: string, recovered: boolean): Promise<void> {
    const exec = new RunExecution(runId, this.deps);
    this.running.set(runId, exec);
    try {
      let run = await getRunOfAnyOrg(this.deps.db, runId);
      if (run?.status === "queued") {
        // Waiting for agents is not part of the run: its deadline starts once it has them.
        this.waiting.add(runId);
        const turn = await exec.waitForAgents(run, this.stopWaiting.signal).finally(() => this.waiting.delete(runId));
        if (turn === "done") return;
        if (turn === "stopping") {
          // Back to the queue, in its place (the line orders by creation), for a live hub to take.
          await job.moveToDelayed(Date.now() + 1000, token);
          throw new DelayedError();
        }
        run = await getRunOfAnyOrg(this.deps.db, runId);
      }
      const deadline = run ? runDeadlineMs(run.plan, this.deps.timing) : 60_000;
      await withTimeout(exec.execute(recovered), deadline, `run did not finish within its deadline of ${seconds(deadline)}`);
    } catch (err) {
      if (err instanceof DelayedError) throw err;
      const reason = runErrorReason(err);
      this.deps.log.error({ runId, err: rawError(err), reason }, "run execution failed");
      // Stand the shards down and record why; the run must not stay `running`.
      await exec.standDown(reason).catch(async (e) => {
        this.deps.log.error({ runId, err: errorMessage(e) }, "could not stand the run down cleanly");
        // The usual cause is the database itself being down (the chaos soak left runs `queued` for
        // good when this one write failed once): keep trying until it answers, then say why.
        if (await this.recordUntilStored(runId, reason)) {
          await this.deps.events.status(runId, "errored", reason);
          await this.deps.webhooks.runFinished(runId);
        }
      });
    } finally {
      await exec.releaseAgents().catch((err) => this.deps.log.warn({ runId, err: errorMessage(err) }, "could not release the run's agents"));
      exec.releaseMeter();
      this.running.delete(runId);
    }
  }

  /**
   * Writes the run's errored status, retrying every 2 s for up to 10 minutes while the database
   * refuses; false when the run had already ended (or the database never came back, which is logged).
   */
  private async recordUntilStored(runId: string, reason: string): Promise<boolean> {
    const deadline = Date.now() + 10 * 60_000;
    for (let attempt = 1; ; attempt++) {
      try {
        return await finishRun(this.deps.db, runId, { status: "errored", reason });
      } catch (err) {
        if (Date.now() > deadline) {
          this.deps.log.error({ runId, err: errorMessage(err), attempt }, "could not record the run's end: the database did not answer for 10 minutes");
          return false;
        }
        if (attempt === 1)
          this.deps.log.warn({ runId, err: errorMessage(err) }, "could not record the run's end; retrying every 2 s until the database answers");
        await sleep(2000);
      }
    }
  }

  /** Resolves once no run is executing on this hub. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await sleep(100);
  }

  activeRuns(): string[] {
    return [...this.running.keys()];
  }

  /**
   * Shutdown, after the grace period: abort this hub's runs everywhere (their shards may be on
   * other replicas), through the same channel a user abort takes.
   */
  async abortLocalRuns(redis: Redis, reason: string): Promise<void> {
    for (const runId of this.running.keys())
      if (!this.waiting.has(runId)) await redis.publish(REDIS_KEYS.abort, JSON.stringify(abortRequestSchema.parse({ runId, reason })));
  }

  /** Stops taking run jobs; resolves when the running ones have finished (or at once with force). */
  close(force = false): Promise<void> {
    this.stopWaiting.abort();
    return this.worker.close(force);
  }
}
