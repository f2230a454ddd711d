import type { Queue } from "bullmq";
import type { Logger } from "pino";
import type { RunFinishedPayload } from "@volley/contracts";
import { getRunOfAnyOrg, listActiveWebhooks, type Db } from "@volley/db";
import { enqueue, webhookJob } from "@volley/queue";
import { errorMessage } from "../util/wait";

/** A correction of a run already reported: what was reported, why it changed, and a key unique to this correction (the same if it is sent again). */
export interface Restatement {
  previous: NonNullable<RunFinishedPayload["restatement"]>["previous"];
  why: string;
  key: string;
}

/**
 * Turns a finished run into one `webhook.deliver` job per live webhook of its org. The job id is
 * fixed per (run, webhook), so a run finalized twice (a recovered job) still notifies once; a
 * restatement (late frames changed the run after it ended) is a delivery of its own, keyed by
 * `restatement.key`, with the corrected run and a `restatement` field saying what it replaces.
 */
export class WebhookDispatcher {
  constructor(
    private readonly deps: {
      db: Db;
      queue: Queue;
      log: Logger;
      /** Overrides the catalog's first retry delay (tests). */
      retryDelayMs?: number;
      /** Web's origin, for the run page's link (null: the payload's `url` is null). */
      publicUrl: string | null;
    },
  ) {}

  /** Best effort: a failure to enqueue is logged, never fails the run. */
  async runFinished(runId: string, restatement?: Restatement): Promise<void> {
    const { db, queue, log, retryDelayMs, publicUrl } = this.deps;
    try {
      const run = await getRunOfAnyOrg(db, runId);
      if (!run) return;
      const hooks = await listActiveWebhooks(db, run.orgId, "run.finished");
      const payload: RunFinishedPayload = {
        event: "run.finished",
        run: {
          id: run.id,
          name: run.name,
          status: run.status,
          reason: run.reason,
          summary: run.summary,
          url: publicUrl ? new URL(`/runs/${encodeURIComponent(run.id)}`, publicUrl).href : null,
        },
        ...(restatement ? { restatement: { previous: restatement.previous, why: restatement.why } } : {}),
      };
      const backoff = retryDelayMs === undefined ? {} : { backoff: { type: "exponential", delay: retryDelayMs } };
      const suffix = restatement ? `-restated-${restatement.key}` : "";
      for (const hook of hooks) {
        await enqueue(queue, webhookJob, { webhookId: hook.id, payload }, { jobId: `whd-${run.id}-${hook.id}${suffix}`, ...backoff });
      }
      if (hooks.length > 0) log.info({ runId, webhooks: hooks.length, restated: restatement !== undefined }, "run.finished webhooks queued");
    } catch (err) {
      log.error({ runId, err: errorMessage(err) }, "could not queue run.finished webhooks");
    }
  }
}
