import { createDb, type Db, type DbHandle } from "@volley/db";
import { createRedis, openQueue, QUEUE_NAMES } from "@volley/queue";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { databaseUrl, redisUrl } from "@/env";
import { isRedisCommandTimeout, REDIS_COMMAND_TIMEOUT_MS, redisTimeoutMessage, RedisUnavailableError } from "./errors";
import { getLogger } from "./log";

/**
 * Module-level singletons, created lazily on the first request that needs them: one PostgreSQL
 * pool, one ioredis connection and the BullMQ runs queue on it. They live on globalThis so
 * `next dev` reloading modules doesn't leak pools. The URL is read on every call (cheap), so a
 * missing variable is reported on every request rather than cached, and a changed URL (tests) gets
 * a fresh connection.
 */
interface Singletons {
  db?: { url: string; handle: DbHandle };
  redis?: { url: string; client: Redis; runsQueue: Queue };
}

const g = globalThis as typeof globalThis & { __volleyWeb?: Singletons };
const state = (g.__volleyWeb ??= {});

export function getDb(): Db {
  const url = databaseUrl();
  if (state.db?.url !== url) {
    const previous = state.db;
    state.db = { url, handle: createDb(url, 10) };
    void previous?.handle.close().catch(() => {});
  }
  return state.db.handle.db;
}

function redisState(): NonNullable<Singletons["redis"]> {
  const url = redisUrl();
  if (state.redis?.url !== url) {
    const previous = state.redis;
    const log = getLogger();
    // A producer must not hang a request while Redis is away: give up on a command after one reconnect
    // attempt, and on a connected but frozen Redis (paused, stopped, swapping) after REDIS_COMMAND_TIMEOUT_MS;
    // the same client answers again as soon as Redis does.
    const client = createRedis(url, { maxRetriesPerRequest: 1, connectTimeout: 5_000, commandTimeout: REDIS_COMMAND_TIMEOUT_MS });
    let lastError = "";
    client.on("error", (err: Error) => {
      if (err.message !== lastError) log.warn(`redis: ${err.message}`);
      lastError = err.message;
    });
    client.on("ready", () => {
      lastError = "";
    });
    const runsQueue = openQueue(QUEUE_NAMES.runs, client);
    runsQueue.on("error", () => {}); // already logged by the client listener
    state.redis = { url, client, runsQueue };
    if (previous) void closeRedis(previous);
  }
  return state.redis;
}

export const getRunsQueue = (): Queue => redisState().runsQueue;
export const getRedis = (): Redis => redisState().client;

/**
 * Runs a Redis operation with a deadline, so a request fails with 503 instead of waiting on reconnects.
 * BullMQ calls are several commands, each bounded by REDIS_COMMAND_TIMEOUT_MS; this bounds the whole.
 */
export async function withRedisDeadline<T>(what: string, op: Promise<T>, ms = 2 * REDIS_COMMAND_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisUnavailableError(notConnected(what) ?? redisTimeoutMessage(ms, what))), ms);
  });
  try {
    return await Promise.race([op, deadline]);
  } catch (err) {
    if (err instanceof RedisUnavailableError) throw err;
    if (isRedisCommandTimeout(err)) throw new RedisUnavailableError(redisTimeoutMessage(REDIS_COMMAND_TIMEOUT_MS, what));
    const why = err instanceof Error ? err.message : String(err);
    throw new RedisUnavailableError(`could not ${what}: Redis at REDIS_URL failed (${why}) — check that it is running`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * While the client is not connected (refused, unresolvable, reconnecting), commands wait in its offline
 * queue until the deadline: say that rather than "connected but not responding". The client's own
 * error is already logged by its listener.
 */
function notConnected(what: string): string | null {
  const status = state.redis?.client.status;
  if (status === undefined || status === "ready") return null;
  return `could not ${what}: Redis at REDIS_URL is not connected (${status}) — check that it is running and REDIS_URL points at it`;
}

async function closeRedis(r: NonNullable<Singletons["redis"]>): Promise<void> {
  await r.runsQueue.close().catch(() => {});
  r.client.disconnect();
}

/** Closes every singleton (tests, graceful shutdown). */
export async function closeServices(): Promise<void> {
  const { db, redis } = state;
  state.db = undefined;
  state.redis = undefined;
  await Promise.all([db?.handle.close().catch(() => {}), redis ? closeRedis(redis) : undefined]);
}
