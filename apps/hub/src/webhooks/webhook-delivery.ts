import { createHmac } from "node:crypto";
import { WEBHOOK_HEADERS, type WebhookEvent } from "@volley/contracts";

/** `sha256=<hex>`: the HMAC-SHA256 of the exact body bytes under the webhook's secret. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export class WebhookDeliveryError extends Error {
  override name = "WebhookDeliveryError";
}

/**
 * One POST of a signed event. Resolves on a 2xx; throws (so the job is retried) on any other
 * status, a network error or no answer within `timeoutMs`. Redirects are not followed: a signed
 * body must reach the address the org registered.
 */
export async function postWebhook(input: { url: string; secret: string; event: WebhookEvent; deliveryId: string; body: string; timeoutMs: number }): Promise<number> {
  let res: Response;
  try {
    res = await fetch(input.url, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(input.timeoutMs),
      headers: {
        "content-type": "application/json",
        "user-agent": "Volley-Webhooks/1",
        [WEBHOOK_HEADERS.signature]: webhookSignature(input.secret, input.body),
        [WEBHOOK_HEADERS.event]: input.event,
        [WEBHOOK_HEADERS.delivery]: input.deliveryId,
      },
      body: input.body,
    });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    const why = timedOut ? `no answer within ${input.timeoutMs / 1000} s` : err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new WebhookDeliveryError(`POST ${input.url} failed: ${why}`);
  }
  // The receiver's body is not ours to keep; drain it so the connection is released.
  await res.body?.cancel().catch(() => undefined);
  if (res.status < 200 || res.status >= 300) throw new WebhookDeliveryError(`POST ${input.url} answered ${res.status}; a receiver must answer 2xx`);
  return res.status;
}
