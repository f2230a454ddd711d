import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { WEBHOOK_HEADERS, type WebhookEvent } from "@volley/contracts";
import { publicOnlyRequestOptions, type ResolveAll } from "@volley/contracts/public-lookup";

/** `sha256=<hex>`: the HMAC-SHA256 of the exact body bytes under the webhook's secret. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export class WebhookDeliveryError extends Error {
  override name = "WebhookDeliveryError";
  constructor(
    message: string,
    /** The receiver's answer when it gave one (a non-2xx status), for the delivery log. */
    readonly answer: WebhookAnswer | null = null,
  ) {
    super(message);
  }
}

/** What a receiver answered: its status and the start of its body. */
export interface WebhookAnswer {
  status: number;
  excerpt: string;
}

/** How much of a receiver's answer is kept for the delivery log. */
export const RESPONSE_EXCERPT_CHARS = 500;

export interface WebhookPost {
  url: string;
  secret: string;
  /** x-volley-event: a subscribed event, or `webhook.test` for a test delivery. */
  event: WebhookEvent | "webhook.test";
  deliveryId: string;
  body: string;
  timeoutMs: number;
  /**
   * Hosted mode: the receiver must be a public address when the POST is sent, not only when the
   * webhook was created (a name can be re-pointed at 127.0.0.1 or a metadata address since).
   */
  publicOnly?: boolean;
  /** How host names resolve when publicOnly is set (node:dns by default). */
  resolveAll?: ResolveAll;
}

/**
 * One POST of a signed event. Resolves on a 2xx; throws (so the job is retried) on any other
 * status, a refused address, a network error or no answer within `timeoutMs`. Redirects are not
 * followed: a signed body must reach the address the org registered.
 */
export async function postWebhook(input: WebhookPost): Promise<WebhookAnswer> {
  const url = new URL(input.url);
  const guard = publicOnlyRequestOptions(url, input.publicOnly, input.resolveAll);
  if ("refused" in guard) throw new WebhookDeliveryError(`POST ${input.url} refused: ${guard.refused}`);
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  let answer: WebhookAnswer;
  try {
    answer = await new Promise<WebhookAnswer>((resolve, reject) => {
      const req = send(
        url,
        {
          method: "POST",
          signal: AbortSignal.timeout(input.timeoutMs),
          ...guard,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(input.body),
            "user-agent": "Volley-Webhooks/1",
            [WEBHOOK_HEADERS.signature]: webhookSignature(input.secret, input.body),
            [WEBHOOK_HEADERS.event]: input.event,
            [WEBHOOK_HEADERS.delivery]: input.deliveryId,
          },
        },
        (res) => {
          // The start of the answer is kept for the delivery log; the rest is drained so the connection is released.
          const chunks: Buffer[] = [];
          let kept = 0;
          res.on("data", (c: Buffer) => {
            if (kept < RESPONSE_EXCERPT_CHARS * 4) chunks.push(c);
            kept += c.length;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, excerpt: Buffer.concat(chunks).toString("utf8").slice(0, RESPONSE_EXCERPT_CHARS) }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(input.body);
    });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    const why = timedOut ? `no answer within ${input.timeoutMs / 1000} s` : err instanceof Error ? err.message : String(err);
    throw new WebhookDeliveryError(`POST ${input.url} failed: ${why}`);
  }
  if (answer.status < 200 || answer.status >= 300)
    throw new WebhookDeliveryError(`POST ${input.url} answered ${answer.status}; a receiver must answer 2xx`, answer);
  return answer;
}
