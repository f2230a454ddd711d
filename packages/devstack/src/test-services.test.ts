import { inject, describe, expect, it } from "vitest";
import pg from "pg";
import { Redis } from "ioredis";

describe("test services", () => {
  it("provides a PostgreSQL server and a Redis that answer", async () => {
    const client = new pg.Client({ connectionString: inject("databaseServerUrl") });
    await client.connect();
    const { rows } = await client.query("select 1 as one");
    await client.end();
    expect(rows[0].one).toBe(1);
    const redis = new Redis(inject("redisUrl"));
    expect(await redis.ping()).toBe("PONG");
    redis.disconnect();
  });
});
