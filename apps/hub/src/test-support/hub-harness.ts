import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { FINAL_RUN_STATUSES, type Plan } from "@volley/contracts";
import { createDb, createTestDatabase, getRunOfAnyOrg, insertRun, type DbHandle, type RunRow } from "@volley/db";
import { createRedis, enqueue, QUEUE_NAMES, runJob } from "@volley/queue";
import { startHub, type HubConfig, type RunningHub } from "../hub";

export const TEST_AGENT_TOKEN = "test-agent-token";

/** redis://host:port/N — a logical database of its own per test file, so queues never mix. */
export function redisDbUrl(serverUrl: string, db: number): string {
  const u = new URL(serverUrl);
  u.pathname = `/${db}`;
  return u.toString();
}

export interface HubHarness {
  hub: RunningHub;
  databaseUrl: string;
  redisUrl: string;
  hubUrl: string;
  db: DbHandle;
  redis: Redis;
  startRun(plan: Plan): Promise<string>;
  waitForFinal(runId: string, timeoutMs?: number): Promise<RunRow>;
  close(): Promise<void>;
}

/** A hub in-process on port 0 with a fresh database and an emptied Redis logical database. */
export async function startHubHarness(opts: { databaseServerUrl: string; redisUrl: string; redisDb: number; hub?: Partial<HubConfig> }): Promise<HubHarness> {
  const testDb = await createTestDatabase(opts.databaseServerUrl);
  const redisUrl = redisDbUrl(opts.redisUrl, opts.redisDb);
  const redis = createRedis(redisUrl);
  await redis.flushdb();
  const hub = await startHub({
    databaseUrl: testDb.url,
    redisUrl,
    agentToken: TEST_AGENT_TOKEN,
    port: 0,
    log: pino({ level: process.env.HUB_TEST_LOG ?? "silent" }),
    shutdownGraceMs: 1000,
    ...opts.hub,
  });
  const db = createDb(testDb.url, 4);
  const runs = new Queue(QUEUE_NAMES.runs, { connection: redis });
  return {
    hub,
    databaseUrl: testDb.url,
    redisUrl,
    hubUrl: `http://127.0.0.1:${hub.port}`,
    db,
    redis,
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
    },
  };
}
