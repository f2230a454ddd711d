import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

/** The key that marks a logical database leased; it lives in the database it leases. */
const LEASE_KEY = "volley-test:redis-db-lease";
const TTL_MS = 60_000;
const RETRY_MS = 200;

export interface RedisDbLease {
  /** redis://host:port/N of the leased database, empty when leased. */
  url: string;
  db: number;
  /** Empties the database and keeps the lease: a plain FLUSHDB would drop the lease with the rest. */
  flush(): Promise<void>;
  /** Gives the database back; throws when the lease was lost (something else flushed the database). */
  release(): Promise<void>;
}

// As @volley/queue's createRedis (which this package cannot import): commands wait out a blip.
const createRedis = (url: string) => new Redis(url, { maxRetriesPerRequest: null });

/** redis://host:port/N */
function redisDbUrl(serverUrl: string, db: number): string {
  const u = new URL(serverUrl);
  u.pathname = `/${db}`;
  return u.toString();
}

/**
 * Leases a Redis logical database to one test file until release(), emptied. Vitest runs files in
 * parallel, and two files in one database flush each other's keys and take each other's jobs (one
 * file's hub picking up a run of the other's database); a number picked per file was shared by
 * mistake more than once (hub and web tests both), and the test files outnumber the server's 16 databases. A database is leased
 * by a key in it (SET NX, with a TTL refreshed while held, so a killed worker's lease runs out);
 * when every database is leased, the file waits for one (never more files at once than workers).
 * `db`: lease that database only (callers outside this workspace that name their own).
 */
export async function leaseRedisDb(serverUrl: string, opts: { db?: number; waitMs?: number } = {}): Promise<RedisDbLease> {
  const token = `${process.pid}:${randomUUID()}`;
  const probe = createRedis(redisDbUrl(serverUrl, 0));
  try {
    const count = opts.db === undefined ? await databaseCount(probe) : 0;
    const candidates = opts.db === undefined ? Array.from({ length: count }, (_, i) => i) : [opts.db];
    const deadline = Date.now() + (opts.waitMs ?? 90_000);
    for (;;) {
      for (const db of candidates) {
        await probe.select(db);
        if (await probe.set(LEASE_KEY, token, "PX", TTL_MS, "NX")) return await held(serverUrl, db, token);
      }
      if (Date.now() > deadline) throw new Error(`no Redis logical database (of ${candidates.join(", ")}) came free within ${opts.waitMs ?? 90_000} ms`);
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  } finally {
    probe.disconnect();
  }
}

/** The server's `databases` setting; 16 (Redis's default) where CONFIG is not allowed. */
async function databaseCount(redis: Redis): Promise<number> {
  try {
    const [, value] = (await redis.config("GET", "databases")) as string[];
    return Number(value) || 16;
  } catch {
    return 16;
  }
}

const REFRESH = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`;

async function held(serverUrl: string, db: number, token: string): Promise<RedisDbLease> {
  const url = redisDbUrl(serverUrl, db);
  const redis = createRedis(url);
  let lost = false;
  const flush = async () => {
    // One transaction: no other file can take the database between the flush and the lease's return.
    await redis.multi().flushdb().set(LEASE_KEY, token, "PX", TTL_MS).exec();
  };
  await flush();
  const timer = setInterval(() => {
    redis
      .eval(REFRESH, 1, LEASE_KEY, token, TTL_MS)
      .then((ok) => {
        if (!ok) lost = true;
      })
      .catch(() => {});
  }, TTL_MS / 4);
  timer.unref();
  return {
    url,
    db,
    flush,
    async release() {
      clearInterval(timer);
      try {
        if (!(await redis.eval(RELEASE, 1, LEASE_KEY, token))) lost = true;
      } finally {
        redis.disconnect();
      }
      if (lost) throw new Error(`the lease on Redis database ${db} was lost while held: something flushed it (only lease.flush() may)`);
    },
  };
}
