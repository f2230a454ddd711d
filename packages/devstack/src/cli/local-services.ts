import path from "node:path";
import type { DevstackEnv } from "../env";
import { startEmbeddedPostgres } from "../embedded-postgres";
import { startLocalRedis } from "../local-redis";

export interface LocalServices {
  databaseUrl: string;
  redisUrl: string;
  describe: { postgres: string; redis: string };
  stop(): Promise<void>;
}

/** DATABASE_URL / REDIS_URL when given, else the embedded PostgreSQL and a local redis-server with data in VOLLEY_DATA_DIR. */
export async function startLocalServices(env: DevstackEnv, log: (line: string) => void): Promise<LocalServices> {
  const stops: Array<() => Promise<void>> = [];
  try {
    let databaseUrl = env.DATABASE_URL;
    let pgDescription = "DATABASE_URL";
    if (!databaseUrl) {
      const dir = path.join(env.VOLLEY_DATA_DIR, "pg");
      log(`starting embedded PostgreSQL (data in ${dir}, port ${env.VOLLEY_PG_PORT})…`);
      const pg = await startEmbeddedPostgres({ dir, port: env.VOLLEY_PG_PORT });
      databaseUrl = pg.url;
      pgDescription = `embedded, 127.0.0.1:${env.VOLLEY_PG_PORT}, data in ${dir}`;
      stops.push(pg.stop);
    }
    let redisUrl = env.REDIS_URL;
    let redisDescription = "REDIS_URL";
    if (!redisUrl) {
      const dir = path.join(env.VOLLEY_DATA_DIR, "redis");
      log(`starting redis-server (data in ${dir}, port ${env.VOLLEY_REDIS_PORT})…`);
      const redis = await startLocalRedis({ dir, port: env.VOLLEY_REDIS_PORT, persist: true });
      redisUrl = redis.url;
      redisDescription = `local redis-server, 127.0.0.1:${env.VOLLEY_REDIS_PORT}`;
      stops.push(redis.stop);
    }
    return {
      databaseUrl,
      redisUrl,
      describe: { postgres: pgDescription, redis: redisDescription },
      async stop() {
        for (const stop of stops.reverse()) await stop().catch(() => {});
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    throw err;
  }
}
