import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { Queue, QueueEvents } from "bullmq";
import { eq } from "drizzle-orm";
import { pino } from "pino";
import type { Redis } from "ioredis";
import {
  createDb,
  createTestDatabase,
  finishRun,
  getRunMeter,
  getRunOfAnyOrg,
  insertFrames,
  insertRun,
  insertShards,
  listFrames,
  listRunPoints,
  markRunRunning,
  saveRunMeter,
  schema,
  upsertAgent,
  upsertRunPoints,
  type DbHandle,
} from "@volley/db";
import { IntervalMerger } from "@volley/metrics";
import { createRedis, MAINTENANCE_QUEUE, retentionJob, scheduleRetention } from "@volley/queue";
import { leaseRedisDb, type RedisDbLease } from "@volley/devstack";
import { testFrame, testPlan } from "../test-support/fixtures";
import { applyRetention, RetentionWorker } from "./retention-worker";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;
let lease: RedisDbLease;
let redis: Redis;
const DAY = 86_400_000;

beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  h = createDb(testDb.url, 2);
  lease = await leaseRedisDb(inject("redisUrl"));
  redis = createRedis(lease.url);
});
afterAll(async () => {
  redis?.disconnect();
  await h?.close();
  await testDb?.drop();
  await lease?.release();
});

/** A run with 3 seconds of frames; `endedDaysAgo` null leaves it running; `metered` writes its merged rows as the hub's meter does. */
async function run(endedDaysAgo: number | null, metered = true) {
  const plan = testPlan();
  const row = await insertRun(h.db, { plan });
  await markRunRunning(h.db, row.id);
  const [shard] = await insertShards(h.db, row.id, [plan]);
  const frames = [0, 1, 2].map((s) => testFrame({ runId: row.id, shardId: shard!.id, agentId: "agt_r" }, s, [10, 20]));
  await insertFrames(h.db, frames);
  if (metered) {
    await upsertRunPoints(
      h.db,
      row.id,
      frames.map((f) => {
        const m = new IntervalMerger(f.index);
        m.add(f);
        return { point: m.point(), histograms: m.histograms(), frames: 1 };
      }),
    );
    await saveRunMeter(h.db, row.id, { frames: frames.length, summary: null });
  }
  if (endedDaysAgo !== null) {
    await finishRun(h.db, row.id, { status: "passed" });
    await h.db
      .update(schema.runs)
      .set({ endedAt: new Date(Date.now() - endedDaysAgo * DAY) })
      .where(eq(schema.runs.id, row.id));
  }
  return row.id;
}

describe("run retention", () => {
  it("deletes raw frames of runs ended before the frames horizon (merged rows kept) and whole runs before the runs horizon, and nothing else", async () => {
    const old = await run(40);
    const recent = await run(10);
    const running = await run(null);
    const legacy = await run(40, false); // no merged rows to fall back on: its frames stay
    const ancient = await run(400);

    const result = await applyRetention(h.db, { framesDays: 30, runsDays: 365 });
    expect(result).toEqual({ prunedRuns: 1, deletedFrames: 3, deletedRuns: 1 });
    expect(await listFrames(h.db, old)).toHaveLength(0);
    expect(await listRunPoints(h.db, old)).toHaveLength(3);
    expect((await getRunMeter(h.db, old))?.framesDeletedAt).toBeInstanceOf(Date);
    expect(await getRunOfAnyOrg(h.db, old)).not.toBeNull();
    for (const kept of [recent, running, legacy]) {
      expect(await listFrames(h.db, kept)).toHaveLength(3);
      expect((await getRunMeter(h.db, kept))?.framesDeletedAt ?? null).toBeNull();
    }
    expect(await getRunOfAnyOrg(h.db, ancient)).toBeNull();
    expect(await listRunPoints(h.db, ancient)).toHaveLength(0);
    // A second pass finds nothing more.
    expect(await applyRetention(h.db, { framesDays: 30, runsDays: 365 })).toEqual({ prunedRuns: 0, deletedFrames: 0, deletedRuns: 0 });
    // Off in both tiers: nothing is touched.
    expect(await applyRetention(h.db, { framesDays: null, runsDays: null })).toEqual({ prunedRuns: 0, deletedFrames: 0, deletedRuns: 0 });
  });

  it("removes agents not heard from within agentsDays that hold no shard, and keeps the rest", async () => {
    const agentRow = async (name: string, lastSeenDaysAgo: number) => {
      const row = await upsertAgent(h.db, {
        token: "unused",
        instanceId: `${name}-instance`,
        name,
        version: "0.1.0",
        pool: "default",
        labels: {},
        capacity: { cores: 2, memoryMb: 2048, maxConnections: 1000, sourceAddresses: [] },
      });
      await h.db
        .update(schema.agents)
        .set({ status: "offline", lastSeenAt: new Date(Date.now() - lastSeenDaysAgo * DAY) })
        .where(eq(schema.agents.id, row.id));
      return row.id;
    };
    const gone = await Promise.all(Array.from({ length: 5 }, (_, i) => agentRow(`gone-${i}`, 10)));
    const recent = await agentRow("recent", 2);
    // Long silent but holding a shard of a running run: kept (its run decides what happens to it).
    const holding = await agentRow("holding", 10);
    const r = await insertRun(h.db, { plan: testPlan() });
    await markRunRunning(h.db, r.id);
    const [shard] = await insertShards(h.db, r.id, [testPlan()]);
    await h.db.update(schema.shards).set({ agentId: holding, status: "running" }).where(eq(schema.shards.id, shard!.id));

    const result = await applyRetention(h.db, { framesDays: null, runsDays: null, agentsDays: 7 });
    expect(result.deletedAgents).toBe(5);
    const left = new Set((await h.db.select({ id: schema.agents.id }).from(schema.agents)).map((a) => a.id));
    for (const id of gone) expect(left.has(id)).toBe(false);
    expect(left.has(recent)).toBe(true);
    expect(left.has(holding)).toBe(true);
    // Unset: agents are kept.
    expect((await applyRetention(h.db, { framesDays: null, runsDays: null })).deletedAgents).toBeUndefined();
  });

  it("runs as a BullMQ repeatable job the hubs' scheduler emits, and refuses bad settings naming the field", async () => {
    const old = await run(50);
    const queue = new Queue(MAINTENANCE_QUEUE, { connection: redis });
    const events = new QueueEvents(MAINTENANCE_QUEUE, { connection: redis.duplicate() });
    await events.waitUntilReady();
    const worker = new RetentionWorker({ db: h.db, connection: redis.duplicate({ maxRetriesPerRequest: null }), log: pino({ level: "silent" }) });
    try {
      const completed = new Promise<unknown>((resolve) => events.once("completed", ({ returnvalue }) => resolve(returnvalue)));
      await scheduleRetention(queue, { framesDays: 30, runsDays: null }, 60_000);
      worker.start();
      expect(await completed).toMatchObject({ prunedRuns: 1, deletedFrames: 3, deletedRuns: 0 });
      expect(await listFrames(h.db, old)).toHaveLength(0);
      const [scheduler] = await queue.getJobSchedulers();
      expect(scheduler).toMatchObject({ key: "runs-retention", name: retentionJob.name, every: 60_000 });
      // Both tiers off: the scheduler is removed.
      await scheduleRetention(queue, { framesDays: null, runsDays: null });
      expect(await queue.getJobSchedulers()).toHaveLength(0);
      await expect(scheduleRetention(queue, { framesDays: 0, runsDays: null })).rejects.toThrow(/framesDays: at least 1 day/);
    } finally {
      await worker.close(true);
      await events.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
