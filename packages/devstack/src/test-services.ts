import { mkdtempSync, rmSync, chmodSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadEnv } from "./env";
import { freePort } from "./free-port";
import { startEmbeddedPostgres } from "./embedded-postgres";
import { startLocalRedis } from "./local-redis";

export interface TestServices {
  /** A PostgreSQL server URL on which tests may create and drop databases. */
  databaseServerUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

/**
 * The servers tests run against: the ones named by VOLLEY_TEST_DATABASE_URL / VOLLEY_TEST_REDIS_URL,
 * else a throwaway embedded PostgreSQL and redis-server, so `npm test` works on a machine with only Node.
 */
export async function startTestServices(): Promise<TestServices> {
  const env = loadEnv();
  const stops: Array<() => Promise<void>> = [];
  let databaseServerUrl = env.VOLLEY_TEST_DATABASE_URL;
  let redisUrl = env.VOLLEY_TEST_REDIS_URL;
  const tmp = mkdtempSync(path.join(os.tmpdir(), "volley-test-"));
  chmodSync(tmp, 0o755);
  try {
    if (!databaseServerUrl) {
      const pg = await startEmbeddedPostgres({ dir: path.join(tmp, "pg"), port: await freePort() });
      databaseServerUrl = pg.serverUrl;
      stops.push(pg.stop);
    }
    if (!redisUrl) {
      const redis = await startLocalRedis({ dir: path.join(tmp, "redis"), port: await freePort(), persist: false });
      redisUrl = redis.url;
      stops.push(redis.stop);
    }
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    throw err;
  }
  return {
    databaseServerUrl,
    redisUrl,
    async stop() {
      for (const stop of stops.reverse()) await stop().catch(() => {});
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
