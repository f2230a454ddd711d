import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { FINAL_RUN_STATUSES, type Plan } from "@volley/contracts";
import { createDb, createTestDatabase, getRunOfAnyOrg, insertRun, type DbHandle, type RunRow } from "@volley/db";
import { createRedis, enqueue, QUEUE_NAMES, runJob } from "@volley/queue";
import { startHub, type HubConfig, type RunningHub } from "../hub";
import { leaseRedisDb } from "@volley/devstack";

export const TEST_AGENT_TOKEN = "test-agent-token";

export interface HubHarness {
  hub: RunningHub;
  databaseUrl: string;
  redisUrl: string;
  /** The Redis logical database leased to this harness (in redisUrl). */
  redisDb: number;
  hubUrl: string;
  db: DbHandle;
  redis: Redis;
  /** The runs queue (what web enqueues a run's job on). */
  runs: Queue;
  startRun(plan: Plan): Promise<string>;
  waitForFinal(runId: string, timeoutMs?: number): Promise<RunRow>;
  close(): Promise<void>;
}

export interface HubHarnessOptions {
  databaseServerUrl: string;
  /** The Redis server; the harness leases one of its logical databases (@volley/devstack leaseRedisDb). */
  redisUrl: string;
  hub?: Partial<HubConfig>;
  /** Where the hub reaches its database, given the test database's URL (a relay the test can cut, say). */
  hubDatabaseUrl?: (url: string) => string | Promise<string>;
}

/** A hub in-process on port 0 with a fresh database and a Redis logical database leased to it, emptied. */
export async function startHubHarness(opts: HubHarnessOptions): Promise<HubHarness> {
  const testDb = await createTestDatabase(opts.databaseServerUrl);
  const lease = await leaseRedisDb(opts.redisUrl);
  const redisUrl = lease.url;
  const redis = createRedis(redisUrl);
  let hub: RunningHub;
  try {
    hub = await startHub({
      databaseUrl: opts.hubDatabaseUrl ? await opts.hubDatabaseUrl(testDb.url) : testDb.url,
      redisUrl,
      agentToken: TEST_AGENT_TOKEN,
      port: 0,
      log: pino({ level: process.env.HUB_TEST_LOG ?? "silent" }),
      shutdownGraceMs: 1000,
      ...opts.hub,
    });
  } catch (err) {
    // The file's afterAll has no harness to close: give the database and the lease back here.
    redis.disconnect();
    await testDb.drop().catch(() => {});
    await lease.release().catch(() => {});
    throw err;
  }
  const db = createDb(testDb.url, 4);
  const runs = new Queue(QUEUE_NAMES.runs, { connection: redis });
  return {
    hub,
    databaseUrl: testDb.url,
    redisUrl,
    redisDb: lease.db,
    hubUrl: `http://127.0.0.1:${hub.port}`,
    db,
    redis,
    runs,
    // What apps/web does: insert the run, enqueue its job.
    async startRun(plan) {
      const run = await insertRun(db.db, { plan });
      await enqueue(runs, runJob, { runId: run.id });
      return run.id;
    },
    async waitForFinal(runId, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const run = await getRunOfAnyOrg(db.db, runId);
        if (run && FINAL_RUN_STATUSES.includes(run.status)) return run;
        if (Date.now() > deadline) throw new Error(`run ${runId} still ${run?.status} after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      await hub.close();
      await runs.close();
      redis.disconnect();
      await db.close();
      await testDb.drop();
      await lease.release();
    },
  };
}
