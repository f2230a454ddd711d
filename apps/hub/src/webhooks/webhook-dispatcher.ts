import type { Queue } from "bullmq";
import type { Logger } from "pino";
import { getRunOfAnyOrg, listActiveWebhooks, type Db } from "@volley/db";
import { enqueue, webhookJob } from "@volley/queue";
import { errorMessage } from "../util/wait";

/**
 * Turns a finished run into one `webhook.deliver` job per live webhook of its org. The job id is
 * fixed per (run, webhook), so a run finalized twice (a recovered job) still notifies once.
 */
export class WebhookDispatcher {
  constructor(
    private readonly deps: {
      db: Db;
      queue: Queue;
      log: Logger;
      /** Overrides the catalog's first retry delay (tests). */
      retryDelayMs?: number;
    },
  ) {}

  /** Best effort: a failure to enqueue is logged, never fails the run. */
  async runFinished(runId: string): Promise<void> {
    const { db, queue, log, retryDelayMs } = this.deps;
    try {
      const run = await getRunOfAnyOrg(db, runId);
      if (!run) return;
      const hooks = await listActiveWebhooks(db, run.orgId, "run.finished");
      const payload = { event: "run.finished" as const, run: { id: run.id, name: run.name, status: run.status, reason: run.reason, summary: run.summary } };
      const backoff = retryDelayMs === undefined ? {} : { backoff: { type: "exponential", delay: retryDelayMs } };
      for (const hook of hooks) {
        await enqueue(queue, webhookJob, { webhookId: hook.id, payload }, { jobId: `whd-${run.id}-${hook.id}`, ...backoff });
      }
      if (hooks.length > 0) log.info({ runId, webhooks: hooks.length }, "run.finished webhooks queued");
    } catch (err) {
      log.error({ runId, err: errorMessage(err) }, "could not queue run.finished webhooks");
    }
  }
}
