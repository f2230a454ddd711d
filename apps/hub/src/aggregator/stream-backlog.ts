import type { Redis } from "ioredis";
import { AGGREGATOR_GROUP, REDIS_KEYS } from "@volley/contracts";

/**
 * How many of a run's stream entries the aggregator has not stored yet: unread by the consumer
 * group (lag) plus read but not acknowledged (pending; acks follow the database commit). 0 for a
 * run without a stream; null when Redis cannot say (no group yet, or an unknown lag after trims).
 */
export async function streamBacklog(redis: Redis, runId: string): Promise<number | null> {
  let groups: unknown;
  try {
    groups = await redis.xinfo("GROUPS", REDIS_KEYS.frames(runId));
  } catch (err) {
    if (/no such key/i.test(String(err))) return 0;
    throw err;
  }
  for (const raw of groups as unknown[][]) {
    const info: Record<string, unknown> = {};
    for (let i = 0; i + 1 < raw.length; i += 2) info[String(raw[i])] = raw[i + 1];
    if (info.name !== AGGREGATOR_GROUP) continue;
    return info.lag === null || info.lag === undefined ? null : Number(info.pending) + Number(info.lag);
  }
  // Stream exists but the aggregator has not created its group yet: nothing stored so far.
  return null;
}

/** Whether the aggregator has stored everything in a run's frame stream (streamBacklog is 0). */
export async function streamDrained(redis: Redis, runId: string): Promise<boolean> {
  return (await streamBacklog(redis, runId)) === 0;
}
