import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import "@volley/devstack/vitest-context";
import { pino } from "pino";
import { AGGREGATOR_GROUP, REDIS_KEYS } from "@volley/contracts";
import { createDb, createTestDatabase, insertRun, insertShards, listFrames, type DbHandle } from "@volley/db";
import { createRedis } from "@volley/queue";
import type { Redis } from "ioredis";
import { runStateKey } from "../coordination/run-coordinator";
import { leaseRedisDb, type RedisDbLease } from "@volley/devstack";
import { testFrame, testPlan } from "../test-support/fixtures";
import { Aggregator } from "./aggregator";
import { SAMPLES_PER_EVENT } from "./sample-cap";
import { streamDrained } from "./stream-backlog";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;
let lease: RedisDbLease;
let redis: Redis;
let reader: Redis;
const stored: Array<[string, number]> = [];

beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  h = createDb(testDb.url, 2);
  lease = await leaseRedisDb(inject("redisUrl"));
  redis = createRedis(lease.url);
  reader = createRedis(lease.url);
});
afterAll(async () => {
  redis?.disconnect();
  reader?.disconnect();
  await h?.close();
  await testDb?.drop();
  await lease?.release();
});

function aggregator(consumer = "test-hub", claimIdleMs = 30_000) {
  return new Aggregator({
    db: h.db,
    redis,
    reader,
    consumer,
    log: pino({ level: "silent" }),
    onStored: (r, n) => stored.push([r, n]),
    blockMs: 100,
    claimIdleMs,
    maintenanceEveryMs: 0,
  });
}

async function runWithShard() {
  const run = await insertRun(h.db, { plan: testPlan() });
  const [shard] = await insertShards(h.db, run.id, [testPlan()]);
  return { runId: run.id, shardId: shard!.id, agentId: "agt_test" };
}

const xadd = (runId: string, value: unknown) =>
  redis.multi().xadd(REDIS_KEYS.frames(runId), "*", "f", JSON.stringify(value)).sadd(REDIS_KEYS.activeRuns, runId).exec();

describe("aggregator", () => {
  it("stores a frame delivered twice once, and acks both entries", async () => {
    const ids = await runWithShard();
    const frame = testFrame(ids, 0, [10, 20]);
    await xadd(ids.runId, frame);
    await xadd(ids.runId, frame);
    await xadd(ids.runId, testFrame(ids, 1, [30]));
    const agg = aggregator();
    await agg.pollOnce();
    await agg.pollOnce();
    expect((await listFrames(h.db, ids.runId)).map((f) => f.seq)).toEqual([0, 1]);
    const pending = (await redis.xpending(REDIS_KEYS.frames(ids.runId), AGGREGATOR_GROUP)) as [number, ...unknown[]];
    expect(pending[0]).toBe(0);
    expect(await streamDrained(redis, ids.runId)).toBe(true);
    expect(stored.find(([r]) => r === ids.runId)?.[1]).toBe(2);
  });

  it("drops malformed entries and frames of unknown shards without blocking the good ones", async () => {
    const ids = await runWithShard();
    await xadd(ids.runId, { nonsense: true });
    await xadd(ids.runId, testFrame({ ...ids, shardId: "shd_missing" }, 0, [1]));
    await xadd(ids.runId, testFrame(ids, 0, [1]));
    await aggregator().pollOnce();
    expect(await listFrames(h.db, ids.runId)).toHaveLength(1);
    expect(await streamDrained(redis, ids.runId)).toBe(true);
  });

  it("claims entries a crashed hub read but never acked", async () => {
    const ids = await runWithShard();
    const key = REDIS_KEYS.frames(ids.runId);
    await xadd(ids.runId, testFrame(ids, 0, [5]));
    await redis.xgroup("CREATE", key, AGGREGATOR_GROUP, "0", "MKSTREAM");
    // The "crashed" consumer reads and dies before storing.
    await redis.xreadgroup("GROUP", AGGREGATOR_GROUP, "crashed-hub", "COUNT", 10, "STREAMS", key, ">");
    expect(await streamDrained(redis, ids.runId)).toBe(false);
    await new Promise((r) => setTimeout(r, 60));
    await aggregator("rescuer", 50).pollOnce();
    expect(await listFrames(h.db, ids.runId)).toHaveLength(1);
    expect(await streamDrained(redis, ids.runId)).toBe(true);
  });

  it("stores flow frames' unmatched samples, at most SAMPLES_PER_EVENT per event over the run", async () => {
    const ids = await runWithShard();
    // 3 frames of 8 "presence" samples (24 > the cap) and one "typing" sample each.
    for (let seq = 0; seq < 3; seq++) {
      const samples = [
        ...Array.from({ length: 8 }, (_, k) => ({ event: "presence", data: JSON.stringify({ user: `u${seq}-${k}` }) })),
        { event: "typing", data: `<i>${seq}</i>` },
      ];
      const frame = testFrame(ids, seq, [5]);
      await xadd(ids.runId, { ...frame, counters: { ...frame.counters, "messages.unmatched": 9, "unmatched.presence": 8, "unmatched.typing": 1 }, samples });
    }
    await aggregator().pollOnce();
    const rows = await listFrames(h.db, ids.runId);
    expect(rows).toHaveLength(3);
    const all = rows.flatMap((r) => r.samples ?? []);
    expect(all.filter((x) => x.event === "presence")).toHaveLength(SAMPLES_PER_EVENT);
    expect(all.filter((x) => x.event === "typing").map((x) => x.data)).toEqual(["<i>0</i>", "<i>1</i>", "<i>2</i>"]);
    expect(rows[0]!.samples![0]).toEqual({ event: "presence", data: '{"user":"u0-0"}' });
    // Counters are never capped: every unmatched message is counted.
    expect(rows.reduce((n, r) => n + (r.counters["unmatched.presence"] ?? 0), 0)).toBe(24);
  });

  it("retires a run once it is finalized and its stream is drained", async () => {
    const ids = await runWithShard();
    await xadd(ids.runId, testFrame(ids, 0, [5]));
    const agg = aggregator();
    await agg.pollOnce();
    expect(await redis.sismember(REDIS_KEYS.activeRuns, ids.runId)).toBe(1);
    await redis.hset(runStateKey(ids.runId), "finalized", "passed");
    await agg.pollOnce();
    expect(await redis.sismember(REDIS_KEYS.activeRuns, ids.runId)).toBe(0);
  });
});
