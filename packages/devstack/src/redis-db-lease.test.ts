import { describe, expect, inject, it } from "vitest";
import { Redis } from "ioredis";
import "./vitest-context";
import { leaseRedisDb } from "./redis-db-lease";

const createRedis = (url: string) => new Redis(url, { maxRetriesPerRequest: null });

// Leases against the real Redis server, beside the other test files leasing from it at the same time.

describe("Redis logical database leases", () => {
  it("gives files held at once different databases, each emptied, and one named database only once it is given back", async () => {
    const a = await leaseRedisDb(inject("redisUrl"));
    const b = await leaseRedisDb(inject("redisUrl"));
    try {
      expect(b.db).not.toBe(a.db);
      const redis = createRedis(a.url);
      await redis.set("left-over", "1");
      await a.flush();
      expect(await redis.exists("left-over")).toBe(0);
      redis.disconnect();

      await expect(leaseRedisDb(inject("redisUrl"), { db: a.db, waitMs: 300 })).rejects.toThrow(/came free/);
      await a.release();
      const again = await leaseRedisDb(inject("redisUrl"), { db: a.db, waitMs: 10_000 });
      expect(again.db).toBe(a.db);
      await again.release();
    } finally {
      await b.release();
    }
  });

  it("says so on release when something else flushed the leased database", async () => {
    const lease = await leaseRedisDb(inject("redisUrl"));
    const other = createRedis(lease.url);
    await other.flushdb();
    other.disconnect();
    await expect(lease.release()).rejects.toThrow(`the lease on Redis database ${lease.db} was lost`);
  });
});
