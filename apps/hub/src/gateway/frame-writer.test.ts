import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import type { Redis } from "ioredis";
import { REDIS_KEYS } from "@volley/contracts";
import { createRedis } from "@volley/queue";
import { leaseRedisDb, type RedisDbLease } from "@volley/devstack";
import { FrameWriter } from "./frame-writer";

let lease: RedisDbLease;
let redis: Redis;

beforeAll(async () => {
  lease = await leaseRedisDb(inject("redisUrl"));
  redis = createRedis(lease.url);
});
afterAll(async () => {
  redis?.disconnect();
  await lease?.release();
});

describe("frame writer", () => {
  it("writes every appended frame to its run's stream, and opens a new gather window after each flush", async () => {
    const writer = new FrameWriter(redis, 30);
    const first = ["a", "b", "c"].map((body) => writer.append("run_fw1", body));
    await Promise.all(first);
    // The next append after a flush schedules a flush of its own (it would wait forever otherwise).
    await Promise.all([writer.append("run_fw1", "d"), writer.append("run_fw2", "e")]);
    const bodies = async (runId: string) => ((await redis.xrange(REDIS_KEYS.frames(runId), "-", "+")) as Array<[string, string[]]>).map(([, f]) => f[1]);
    expect(await bodies("run_fw1")).toEqual(["a", "b", "c", "d"]);
    expect(await bodies("run_fw2")).toEqual(["e"]);
    expect((await redis.smembers(REDIS_KEYS.activeRuns)).sort()).toEqual(["run_fw1", "run_fw2"]);
  });
});
