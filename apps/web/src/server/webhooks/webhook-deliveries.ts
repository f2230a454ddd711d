import { randomBytes } from "node:crypto";
import type { WebhookDelivery } from "@volley/contracts";
import { getOrgWebhook, listDeliveryAttempts, listWebhookDeliveries, type WebhookDeliveryRow } from "@volley/db";
import { enqueue, webhookJob } from "@volley/queue";
import { ApiError, notFound } from "../http/errors";
import { getDb, withRedisDeadline } from "../http/services";
import { getWebhooksQueue } from "../schedules/queues";

/** A webhook's delivery log, and test deliveries sent through the hub like real events. */

export function toDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    deliveryId: row.deliveryId,
    event: row.event,
    runId: row.runId,
    attempt: row.attempt,
    test: row.test,
    status: row.status,
    ok: row.ok,
    error: row.error,
    responseExcerpt: row.responseExcerpt,
    durationMs: row.durationMs,
    at: row.at.toISOString(),
  };
}

export async function loadDeliveries(orgId: string, webhookId: string, limit: number): Promise<WebhookDelivery[]> {
  const db = getDb();
  if (!(await getOrgWebhook(db, orgId, webhookId))) throw notFound(`webhook ${webhookId}`);
  return (await listWebhookDeliveries(db, webhookId, limit)).map(toDelivery);
}

/** How long POST …/test waits for the hub's attempt before answering 202 with only its id. */
const TEST_WAIT_MS = 8000;

/**
 * Queues one `webhook.test` delivery (one attempt, no retries: the person watching wants the
 * answer, not a retry schedule) and waits a few seconds for the hub to make it, so the answer can
 * show what the receiver said.
 */
export async function sendTestDelivery(
  orgId: string,
  webhookId: string,
  waitMs = TEST_WAIT_MS,
): Promise<{ deliveryId: string; delivery: WebhookDelivery | null }> {
  const db = getDb();
  const hook = await getOrgWebhook(db, orgId, webhookId);
  if (!hook) throw notFound(`webhook ${webhookId}`);
  if (hook.disabledAt) throw new ApiError(409, "conflict", `webhook ${webhookId} was deleted; add it again to send to it`);
  const deliveryId = `whtest-${webhookId}-${randomBytes(6).toString("hex")}`;
  const payload = { event: "webhook.test" as const, webhook: { id: webhookId }, message: "This is a test delivery from Volley; your receiver got it." };
  await withRedisDeadline("queue the test delivery", enqueue(getWebhooksQueue(), webhookJob, { webhookId, payload }, { jobId: deliveryId, attempts: 1 }));
  const deadline = Date.now() + waitMs;
  for (;;) {
    const [attempt] = await listDeliveryAttempts(db, deliveryId);
    if (attempt) return { deliveryId, delivery: toDelivery(attempt) };
    if (Date.now() >= deadline) return { deliveryId, delivery: null };
    await new Promise((r) => setTimeout(r, 150));
  }
}
