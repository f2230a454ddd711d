import { Redis, type RedisOptions } from "ioredis";

/**
 * ioredis configured as BullMQ requires for workers (`maxRetriesPerRequest: null`) — used for every
 * connection so a Redis blip delays commands instead of failing them.
 */
export function createRedis(url: string, opts: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, ...opts });
}

/** Throws one readable line when Redis cannot be reached. */
export async function checkRedis(url: string): Promise<void> {
  const r = new Redis(url, { maxRetriesPerRequest: 0, lazyConnect: true, connectTimeout: 5000, retryStrategy: () => null });
  // The socket error (ECONNREFUSED, ENOTFOUND…) says more than the "Connection is closed" that follows it.
  let socketError: string | undefined;
  r.on("error", (err: Error) => (socketError ??= err.message));
  try {
    await r.connect();
    await r.ping();
  } catch (err) {
    const why = socketError ?? (err instanceof Error ? err.message : String(err));
    throw new Error(
      `cannot reach Redis at REDIS_URL (${url}): ${why || "connection failed"} — start redis-server or set REDIS_URL to a reachable server (npm start runs a local one when REDIS_URL is unset)`,
    );
  } finally {
    r.disconnect();
  }
}
