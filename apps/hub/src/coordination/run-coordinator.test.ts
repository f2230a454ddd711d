import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { pino } from "pino";
import type { Redis } from "ioredis";
import { createRedis } from "@volley/queue";
import { leaseRedisDb, type RedisDbLease } from "@volley/devstack";
import { RunCoordinator, type RunState } from "./run-coordinator";

// Two replicas' coordinators on one real Redis database: the run's hash and the pub/sub channel.

let lease: RedisDbLease;
const clients: Redis[] = [];
let a: RunCoordinator;
let b: RunCoordinator;
const log = pino({ level: "silent" });

async function replica(): Promise<RunCoordinator> {
  const [redis, subscriber] = [createRedis(lease.url), createRedis(lease.url)];
  clients.push(redis, subscriber);
  const c = new RunCoordinator(redis, subscriber, log);
  await c.start();
  return c;
}

beforeAll(async () => {
  lease = await leaseRedisDb(inject("redisUrl"));
  a = await replica();
  b = await replica();
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await lease?.release();
});

const armedOf = (s: RunState) => s.armed.get("shd_1");

describe("run coordinator's parse cache", () => {
  it("reuses a field's parse while the run runs, and drops the run's parses on every replica once it is finalized", async () => {
    const runId = `run_cache_${Date.now()}`;
    await a.markArmed(runId, "shd_1", { agentId: "agt_1", agentName: "one", at: 1 });
    const [a1, a2, b1] = [await a.getState(runId), await a.getState(runId), await b.getState(runId)];
    expect(armedOf(a2)).toBe(armedOf(a1)); // the same parse, unchanged text
    expect(armedOf(b1)).toEqual(armedOf(a1));
    const [aRuns, bRuns] = [a.cachedRuns, b.cachedRuns];

    const gone = b.waitFor(runId, (s) => s.finalized ?? undefined, { timeoutMs: 5000 });
    await a.markFinalized(runId, "passed");
    expect(await gone).toBe("passed");
    await expect.poll(() => b.cachedRuns).toBe(bRuns - 1);
    expect(a.cachedRuns).toBe(aRuns - 1);

    // Read again after the end (a late waiter): the same values, parsed afresh and not cached again.
    const [a3, a4] = [await a.getState(runId), await a.getState(runId)];
    expect(armedOf(a3)).toEqual(armedOf(a1));
    expect(armedOf(a3)).not.toBe(armedOf(a1));
    expect(armedOf(a4)).not.toBe(armedOf(a3));
    expect(Object.isFrozen(armedOf(a3))).toBe(true);
    expect(a.cachedRuns).toBe(aRuns - 1);
  });
});
