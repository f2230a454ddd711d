import { randomBytes } from "node:crypto";
import { and, desc, eq, isNull } from "drizzle-orm";
import type { WebhookEvent } from "@volley/contracts";
import type { Db } from "../client";
import { newId } from "../ids";
import { webhooks } from "../schema";

export type WebhookRow = typeof webhooks.$inferSelect;

/** Signing secrets are `whsec_` + 32 random base64url characters. */
export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** Creates a webhook with a fresh signing secret; callers show the secret once. */
export async function createWebhook(db: Db, input: { orgId: string; url: string; events: WebhookEvent[]; createdBy?: string | null }): Promise<WebhookRow> {
  const [row] = await db
    .insert(webhooks)
    .values({
      id: newId("whk"),
      orgId: input.orgId,
      url: input.url,
      secret: `${WEBHOOK_SECRET_PREFIX}${randomBytes(24).toString("base64url")}`,
      events: [...new Set(input.events)],
      createdBy: input.createdBy ?? null,
    })
    .returning();
  return row!;
}

/** Every webhook of the org, newest first, deleted ones included (with disabledAt). */
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

/** A live webhook by id (any org: the hub delivers for every org); null when unknown or deleted. */
export async function getActiveWebhook(db: Db, id: string): Promise<WebhookRow | null> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), isNull(webhooks.disabledAt)));
  return row ?? null;
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
