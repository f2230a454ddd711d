import path from "node:path";
import type { DevstackEnv } from "../env";
import { embeddedPostgresUrl, startEmbeddedPostgres } from "../embedded-postgres";
import { startLocalRedis } from "../local-redis";
import type { ChildSpec } from "../supervisor";

export interface LocalServices {
  databaseUrl: string;
  redisUrl: string;
  describe: { postgres: string; redis: string };
  /** The servers `npm start` runs itself (none when both URLs are given), for the supervisor to keep up. */
  specs: ChildSpec[];
}

/** DATABASE_URL / REDIS_URL when given, else the embedded PostgreSQL and a local redis-server with data in VOLLEY_DATA_DIR. */
export function localServices(env: DevstackEnv, log: (line: string) => void): LocalServices {
  const specs: ChildSpec[] = [];
  let databaseUrl = env.DATABASE_URL;
  let pgDescription = "DATABASE_URL";
  if (!databaseUrl) {
    const dir = path.join(env.VOLLEY_DATA_DIR, "pg");
    // Known up front: the apps' environment stays the same across restarts of the server.
    databaseUrl = embeddedPostgresUrl(env.VOLLEY_PG_PORT);
    pgDescription = `embedded, 127.0.0.1:${env.VOLLEY_PG_PORT}, data in ${dir}`;
    specs.push({
      name: "postgres",
      async start() {
        log(`starting embedded PostgreSQL (data in ${dir}, port ${env.VOLLEY_PG_PORT})…`);
        const pg = await startEmbeddedPostgres({ dir, port: env.VOLLEY_PG_PORT });
        return { pid: pg.pid, exited: pg.exited, ready: Promise.resolve(), stop: pg.stop };
      },
    });
  }
  let redisUrl = env.REDIS_URL;
  let redisDescription = "REDIS_URL";
  if (!redisUrl) {
    const dir = path.join(env.VOLLEY_DATA_DIR, "redis");
    redisUrl = `redis://127.0.0.1:${env.VOLLEY_REDIS_PORT}`;
    redisDescription = `local redis-server, 127.0.0.1:${env.VOLLEY_REDIS_PORT}`;
    specs.push({
      name: "redis",
      async start() {
        log(`starting redis-server (data in ${dir}, port ${env.VOLLEY_REDIS_PORT})…`);
        const redis = await startLocalRedis({ dir, port: env.VOLLEY_REDIS_PORT, persist: true });
        return { pid: redis.pid, exited: redis.exited, ready: Promise.resolve(), stop: redis.stop };
      },
    });
  }
  return { databaseUrl, redisUrl, describe: { postgres: pgDescription, redis: redisDescription }, specs };
}
