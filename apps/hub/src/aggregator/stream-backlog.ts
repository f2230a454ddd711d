import type { Redis } from "ioredis";
import { AGGREGATOR_GROUP, REDIS_KEYS } from "@volley/contracts";

/**
 * Whether the aggregator has stored everything in a run's frame stream: no entries left unread
 * by the consumer group (lag) and none read but not yet acknowledged (pending; acks follow the
 * database commit). A run without a stream has nothing to store.
 */
export async function streamDrained(redis: Redis, runId: string): Promise<boolean> {
  let groups: unknown;
  try {
    groups = await redis.xinfo("GROUPS", REDIS_KEYS.frames(runId));
  } catch (err) {
    if (/no such key/i.test(String(err))) return true;
    throw err;
  }
  for (const raw of groups as unknown[][]) {
    const info: Record<string, unknown> = {};
    for (let i = 0; i + 1 < raw.length; i += 2) info[String(raw[i])] = raw[i + 1];
    if (info.name !== AGGREGATOR_GROUP) continue;
    return Number(info.pending) === 0 && info.lag !== null && Number(info.lag) === 0;
  }
  // Stream exists but the aggregator has not created its group yet: nothing stored so far.
  return false;
}
