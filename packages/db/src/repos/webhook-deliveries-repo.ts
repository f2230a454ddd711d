import { desc, eq } from "drizzle-orm";
import type { Db } from "../client";
import { webhookDeliveries } from "../schema";

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

export async function recordWebhookDelivery(db: Db, row: Omit<WebhookDeliveryRow, "id" | "at">): Promise<WebhookDeliveryRow> {
  const [out] = await db.insert(webhookDeliveries).values(row).returning();
  return out!;
}

/** The webhook's latest attempts, newest first. The caller checks the webhook is the org's. */
export async function listWebhookDeliveries(db: Db, webhookId: string, limit: number): Promise<WebhookDeliveryRow[]> {
  return db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.webhookId, webhookId))
    .orderBy(desc(webhookDeliveries.at), desc(webhookDeliveries.id))
    .limit(limit);
}

/** The attempts made under one delivery id (a test delivery has one), newest first. */
export async function listDeliveryAttempts(db: Db, deliveryId: string): Promise<WebhookDeliveryRow[]> {
  return db.select().from(webhookDeliveries).where(eq(webhookDeliveries.deliveryId, deliveryId)).orderBy(desc(webhookDeliveries.id));
}
