import { randomBytes } from "node:crypto";
import { and, desc, eq, isNull } from "drizzle-orm";
import type { WebhookEvent, WebhookFormat } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { webhooks } from "../schema";
import { openSecret, sealSecret, type SecretKeys } from "../secret-box";

export type WebhookRow = typeof webhooks.$inferSelect;

/** Signing secrets are `whsec_` + 32 random base64url characters. */
export const WEBHOOK_SECRET_PREFIX = "whsec_";

/**
 * Creates a webhook with a fresh signing secret, stored sealed under `keys` (secret-box.ts; null:
 * no VOLLEY_SECRETS_KEY configured, stored as is — the apps warn about that at startup). The row
 * returned carries the secret in clear, for the caller to show once.
 */
export async function createWebhook(
  db: Db,
  input: { orgId: string; url: string; events: WebhookEvent[]; format?: WebhookFormat; createdBy?: string | null },
  keys: SecretKeys | null,
): Promise<WebhookRow> {
  const secret = `${WEBHOOK_SECRET_PREFIX}${randomBytes(24).toString("base64url")}`;
  const [row] = await db
    .insert(webhooks)
    .values({
      id: newId("whk"),
      orgId: input.orgId,
      url: input.url,
      secret: keys ? sealSecret(secret, keys) : secret,
      events: [...new Set(input.events)],
      format: input.format ?? "generic",
      createdBy: input.createdBy ?? null,
    })
    .returning();
  return { ...row!, secret };
}

/** Every webhook of the org, newest first, deleted ones included (with disabledAt); `secret` as stored (sealed): never show it. */
export async function listWebhooks(db: Db, orgId: string): Promise<WebhookRow[]> {
  return db.select().from(webhooks).where(eq(webhooks.orgId, orgId)).orderBy(desc(webhooks.createdAt));
}

/** The org's live webhooks subscribed to `event`: the ones a delivery goes to. */
export async function listActiveWebhooks(db: Db, orgId: string, event: WebhookEvent): Promise<WebhookRow[]> {
  const rows = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.orgId, orgId), isNull(webhooks.disabledAt)));
  return rows.filter((w) => w.events.includes(event));
}

/**
 * A live webhook by id (any org: the hub delivers for every org), its secret opened; null when
 * unknown or deleted. A secret stored in plain text (rows from before encryption) or sealed under
 * an old key is re-sealed under the current key here, so rows migrate as they are used.
 */
export async function getActiveWebhook(db: Db, id: string, keys: SecretKeys | null): Promise<WebhookRow | null> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), isNull(webhooks.disabledAt)));
  if (!row || !keys) return row ?? null;
  const { plain, reseal } = openSecret(row.secret, keys);
  // Only if nobody re-sealed it meanwhile: the stored value is the one we opened.
  if (reseal)
    await db
      .update(webhooks)
      .set({ secret: sealSecret(plain, keys) })
      .where(and(eq(webhooks.id, id), eq(webhooks.secret, row.secret)));
  return { ...row, secret: plain };
}

/** Deletes (disables) a webhook of this org; false when the org has no such live webhook. */
export async function disableWebhook(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db
    .update(webhooks)
    .set({ disabledAt: new Date() })
    .where(and(eq(webhooks.id, id), eq(webhooks.orgId, orgId), isNull(webhooks.disabledAt)))
    .returning({ id: webhooks.id });
  return rows.length === 1;
}

/** A webhook of this org (live or deleted), secret as stored; null when the org has none by that id. */
export async function getOrgWebhook(db: Db, orgId: string, id: string): Promise<WebhookRow | null> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.orgId, orgId)));
  return row ?? null;
}
