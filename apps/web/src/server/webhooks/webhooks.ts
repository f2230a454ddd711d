import type { CreateWebhookBody, Webhook } from "@volley/contracts";
import { secretsKeys, volleyMode } from "@/env";
import { assertPublicAddresses, resolveTarget, targetHost } from "@volley/admission";
import { createWebhook, disableWebhook, listWebhooks, type WebhookRow } from "@volley/db";
import type { AuthContext } from "../auth/auth";
import { notFound } from "../http/errors";
import { logOnce } from "../http/log";
import { getDb } from "../http/services";

/** Webhooks of an org: created (signing secret shown once), listed without secrets, deleted. */

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    format: row.format,
    createdAt: row.createdAt.toISOString(),
    disabledAt: row.disabledAt ? row.disabledAt.toISOString() : null,
  };
}

export async function addWebhook(auth: AuthContext, body: CreateWebhookBody): Promise<{ webhook: Webhook; secret: string }> {
  const createdBy = auth.actor.kind === "user" ? auth.actor.userId : null;
  // Hosted: a webhook must not make the hub call into a private network on a user's behalf.
  if (volleyMode() === "hosted") {
    const host = targetHost(body.url);
    assertPublicAddresses(host, await resolveTarget(host, undefined, "url"), "url");
  }
  const keys = secretsKeys();
  if (!keys)
    logOnce(
      "secrets-key-unset",
      "VOLLEY_SECRETS_KEY is not set; webhook signing secrets are stored unencrypted — set it (openssl rand -base64 32) for web and hub",
    );
  const row = await createWebhook(getDb(), { orgId: auth.orgId, url: body.url, events: body.events, format: body.format, createdBy }, keys);
  return { webhook: toWebhook(row), secret: row.secret };
}

export async function listOrgWebhooks(orgId: string): Promise<Webhook[]> {
  return (await listWebhooks(getDb(), orgId)).map(toWebhook);
}

export async function deleteWebhook(orgId: string, id: string): Promise<void> {
  if (!(await disableWebhook(getDb(), orgId, id))) throw notFound(`webhook ${id}`);
}
