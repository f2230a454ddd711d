import { openQueue, QUEUE_NAMES } from "@volley/queue";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { getRedis } from "../http/services";

/**
 * The schedules and webhooks queues, on web's one Redis connection: opened on first use and again
 * when that connection is replaced (services.ts makes a new one when REDIS_URL changes).
 */
const opened = new WeakMap<Redis, Map<string, Queue>>();

function queueOn(name: string): Queue {
  const client = getRedis();
  let byName = opened.get(client);
  if (!byName) opened.set(client, (byName = new Map()));
  let q = byName.get(name);
  if (!q) {
    q = openQueue(name, client);
    q.on("error", () => {}); // logged by the client's own listener
    byName.set(name, q);
  }
  return q;
}

export const getSchedulesQueue = (): Queue => queueOn(QUEUE_NAMES.schedules);
export const getWebhooksQueue = (): Queue => queueOn(QUEUE_NAMES.webhooks);
