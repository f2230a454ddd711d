import { Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { getActiveWebhook, recordWebhookDelivery, type Db, type SecretKeys } from "@volley/db";
import { QUEUE_NAMES, webhookJob } from "@volley/queue";
import { errorMessage } from "../util/wait";
import type { ResolveAll } from "@volley/contracts/public-lookup";
import { webhookBody } from "./webhook-body";
import { postWebhook, WebhookDeliveryError, type WebhookAnswer } from "./webhook-delivery";

/**
 * The BullMQ worker of the webhooks queue (handler of `webhookJob`): signs and POSTs each
 * delivery. A throw makes BullMQ retry with the job's backoff; after the last attempt the job
 * stays failed (kept a week) with the receiver's last answer as its reason.
 */
export class WebhookWorker {
  private readonly worker: Worker;

  constructor(
    private readonly deps: {
      db: Db;
      connection: Redis;
      log: Logger;
      concurrency?: number;
      timeoutMs?: number;
      publicOnly?: boolean;
      resolveAll?: ResolveAll;
      secretsKeys?: SecretKeys | null;
    },
  ) {
    this.worker = new Worker(QUEUE_NAMES.webhooks, (job) => this.deliver(job), {
      connection: deps.connection,
      concurrency: deps.concurrency ?? 8,
      autorun: false,
    });
    this.worker.on("error", (err) => deps.log.error({ err: errorMessage(err) }, "webhook worker error"));
    this.worker.on("failed", (job, err) => {
      const last = job ? job.attemptsMade >= (job.opts.attempts ?? 1) : false;
      deps.log.warn(
        { deliveryId: job?.id, attempt: job?.attemptsMade, err: errorMessage(err) },
        last ? "webhook delivery gave up" : "webhook delivery failed; will retry",
      );
    });
  }

  start(): void {
    void this.worker.run().catch((err) => this.deps.log.error({ err: errorMessage(err) }, "webhook worker stopped"));
  }

  private async deliver(job: Job): Promise<void> {
    const { webhookId, payload } = webhookJob.schema.parse(job.data);
    const hook = await getActiveWebhook(this.deps.db, webhookId, this.deps.secretsKeys ?? null);
    // Deleted since the run ended: the org asked for no more deliveries.
    if (!hook) return void this.deps.log.info({ deliveryId: job.id, webhookId }, "webhook deleted; delivery dropped");
    const started = performance.now();
    const attempt = job.attemptsMade + 1;
    let answer: WebhookAnswer | null = null;
    let error: string | null = null;
    try {
      answer = await postWebhook({
        url: hook.url,
        secret: hook.secret,
        event: payload.event,
        deliveryId: String(job.id),
        body: webhookBody(hook.format, payload),
        timeoutMs: this.deps.timeoutMs ?? 5000,
        publicOnly: this.deps.publicOnly,
        resolveAll: this.deps.resolveAll,
      });
    } catch (err) {
      answer = err instanceof WebhookDeliveryError ? err.answer : null;
      error = errorMessage(err);
      throw err;
    } finally {
      // The log the webhooks page shows; a failure to write it must not turn a delivery into a retry.
      await recordWebhookDelivery(this.deps.db, {
        webhookId,
        deliveryId: String(job.id),
        event: payload.event,
        runId: payload.event === "run.finished" ? payload.run.id : null,
        attempt,
        test: payload.event === "webhook.test",
        status: answer?.status ?? null,
        ok: error === null,
        error,
        responseExcerpt: answer?.excerpt ?? null,
        durationMs: performance.now() - started,
      }).catch((err: unknown) => this.deps.log.warn({ deliveryId: job.id, err: errorMessage(err) }, "could not record the webhook delivery"));
    }
    this.deps.log.info({ deliveryId: job.id, webhookId, status: answer.status, attempt }, "webhook delivered");
  }

  /** Stops taking deliveries; resolves when those in flight have ended (at once with force). */
  close(force = false): Promise<void> {
    return this.worker.close(force);
  }
}
