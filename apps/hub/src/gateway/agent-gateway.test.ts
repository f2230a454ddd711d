import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { MIN_AGENT_VERSION, REDIS_KEYS } from "@volley/contracts";
import { QUEUE_NAMES } from "@volley/queue";
import { createAgentToken, getRun, insertRun, insertShards, listAgents, listFrames, schema } from "@volley/db";
import { TEST_AGENT_TOKEN } from "../test-support/hub-harness";
import { ScriptedAgent } from "../test-support/scripted-agent";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";

const MAX_POOLS = 20;
// Pools are released quickly here so the test sees it; the default is a minute.
const h = useHubHarness({ maxPoolsPerOrg: MAX_POOLS, poolReleaseMs: 500 });

/** CLIENT LIST of this file's logical database: all clients, and those of pools' shard workers (BullMQ names them after their queue). */
async function redisClients(): Promise<{ all: number; shardWorkers: number }> {
  const lines = ((await h.redis.client("LIST")) as string).split("\n").filter((line) => line.includes(` db=${h.redisDb} `));
  const names = lines.map((line) => /(?:^| )name=(\S*)/.exec(line)?.[1] ?? "");
  const shardWorkers = names.filter((n) => /^bull:/.test(n) && Buffer.from(n.slice(5), "base64").toString().startsWith(QUEUE_NAMES.shards(""))).length;
  return { all: lines.length, shardWorkers };
}

describe("agent gateway", () => {
  it("rejects an invalid agent token with a clear message", async () => {
    await expect(h.connect({ token: "not-the-token" })).rejects.toThrow("invalid agent token");
  });

  it("refuses an agent older than MIN_AGENT_VERSION for good, saying how to upgrade; a bad token is permanent too", async () => {
    const { io } = await import("socket.io-client");
    const refusal = async (auth: Record<string, unknown>) => {
      const socket = io(`${h.hubUrl}/agent`, { auth, transports: ["websocket"], reconnection: false });
      const err = await new Promise<Error & { data?: { permanent?: boolean } }>((resolve) => socket.once("connect_error", resolve));
      socket.close();
      return { message: err.message, permanent: err.data?.permanent };
    };
    const hello = { ...ScriptedAgent.hello({ hubUrl: h.hubUrl, name: "old-agent" }), token: TEST_AGENT_TOKEN };
    expect(await refusal({ ...hello, version: "0.0.9" })).toEqual({
      message: `agent version 0.0.9 is older than this hub accepts (${MIN_AGENT_VERSION} or newer): upgrade it by running the install line from Agents → Add agent again (it upgrades in place)`,
      permanent: true,
    });
    expect(await refusal({ ...hello, token: "not-the-token" })).toMatchObject({ permanent: true });
    // The current version is admitted.
    const a = await h.connect({ name: "current-agent", version: MIN_AGENT_VERSION });
    expect(a.agentId).toMatch(/^agt_/);
    a.close();
  });

  it("rejects a malformed hello, naming the field", async () => {
    const { io } = await import("socket.io-client");
    const socket = io(`${h.hubUrl}/agent`, { auth: { token: TEST_AGENT_TOKEN, instanceId: "x" }, transports: ["websocket"], reconnection: false });
    const err = await new Promise<Error>((resolve) => socket.once("connect_error", resolve));
    socket.close();
    expect(err.message).toMatch(/^invalid agent hello: .*name/);
  });

  it("welcomes an agent, registers it online, answers clock pings, and marks it offline when it leaves", async () => {
    const a = await h.connect({ name: "gw-agent" });
    expect(a.agentId).toMatch(/^agt_/);
    const before = Date.now();
    const { hubTime } = await a.clockPing();
    expect(hubTime).toBeGreaterThanOrEqual(before);
    expect(hubTime).toBeLessThanOrEqual(Date.now());
    const row = (await listAgents(h.db.db)).find((r) => r.id === a.agentId);
    expect(row?.status).toBe("online");
    a.close();
    await expect.poll(async () => (await listAgents(h.db.db)).find((r) => r.id === a.agentId)?.status, { timeout: 3000 }).toBe("offline");
  });

  it("answers an invalid frame with ok:false and stays up; refuses a valid one for a shard no agent was given", async () => {
    const a = await h.connect({ name: "gw-frames" });
    const bad = await a.sendFrame({ runId: "run_x", seq: -1 });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatch(/^invalid frame: .*seq/);
    expect(await a.sendFrame("not even an object" as unknown as Record<string, unknown>)).toMatchObject({ ok: false });
    // Still connected and serving after bad input.
    expect((await a.clockPing()).hubTime).toBeGreaterThan(0);

    const run = await insertRun(h.db.db, { plan: testPlan() });
    const [shard] = await insertShards(h.db.db, run.id, [testPlan()]);
    // A decompression bomb in a histogram (64 MB of zeros, ~64 kB deflated) for a shard the agent does
    // not hold is refused as such, before any histogram is inflated (agent-abuse.test.ts: one for its own
    // shard is refused after inflating no more than a histogram can need); nothing is stored.
    const head = Buffer.alloc(8);
    head.writeInt32BE(0x1c849314, 0);
    const inner = deflateSync(Buffer.alloc(64 * 1024 * 1024));
    head.writeInt32BE(inner.byteLength, 4);
    const bombed = testFrame({ runId: run.id, shardId: shard!.id, agentId: a.agentId }, 0, [5]);
    const metric = Object.keys(bombed.histograms)[0]!;
    const refused = await a.sendFrame({ ...bombed, histograms: { ...bombed.histograms, [metric]: Buffer.concat([head, inner]).toString("base64") } });
    expect(refused).toEqual({
      ok: false,
      error: `shard ${shard!.id} of run ${run.id} is not leased to agent gw-frames (${a.agentId}) (it is not assigned to any agent); send frames only for the shard the hub assigned`,
      permanent: true,
    });
    expect((await a.clockPing()).hubTime).toBeGreaterThan(0);
    expect(await a.sendFrame(testFrame({ runId: run.id, shardId: shard!.id, agentId: a.agentId }, 0, [5]))).toEqual({
      ok: false,
      error: `shard ${shard!.id} of run ${run.id} is not leased to agent gw-frames (${a.agentId}) (it is not assigned to any agent); send frames only for the shard the hub assigned`,
      permanent: true,
    });
    expect(await h.redis.xlen(REDIS_KEYS.frames(run.id))).toBe(0);
    expect(await a.end({ runId: run.id, shardId: shard!.id, status: "completed", frames: 1 })).toEqual({
      ok: false,
      error: `shard.end refused: shard ${shard!.id} of run ${run.id} is not leased to agent gw-frames (${a.agentId}) (it holds no shard on this hub)`,
      permanent: true,
    });
    a.close();
  });

  it("refuses frames and shard.end for a shard leased to another agent; stores its own, also once its lease is over", async () => {
    const [a1, a2] = await Promise.all(["gw-lease-1", "gw-lease-2"].map((name) => h.connect({ name, pool: "lease" })));
    try {
      const runId = await h.startRun(testPlan({ agents: { pool: "lease", count: 2 }, duration: "30s" }));
      const [j1, j2] = await Promise.all([a1!, a2!].map((a) => a.until((r) => r.assign.find((j) => j.runId === runId), 10_000, "shard.assign")));
      await Promise.all([a1!.nextStart(), a2!.nextStart()]);
      const who1 = `agent gw-lease-1 (${a1!.agentId})`;

      // a1 reports on a2's shard: refused, naming what it does hold, and nothing reaches the stream.
      const forged = await a1!.sendFrame(testFrame({ runId, shardId: j2!.shardId, agentId: a1!.agentId }, 0, [999]));
      expect(forged).toEqual({
        ok: false,
        error: `shard ${j2!.shardId} of run ${runId} is not leased to ${who1}: it holds shard ${j1!.shardId} of run ${runId}; send frames only for the shard the hub assigned`,
        permanent: true,
      });
      expect(await a1!.end({ runId, shardId: j2!.shardId, status: "completed", frames: 0 })).toEqual({
        ok: false,
        error: `shard.end refused: shard ${j2!.shardId} of run ${runId} is not leased to ${who1} (it holds shard ${j1!.shardId} of run ${runId})`,
        permanent: true,
      });
      // The right shard under another run's id is refused too.
      expect(await a1!.sendFrame(testFrame({ runId: "run_elsewhere", shardId: j1!.shardId, agentId: a1!.agentId }, 0, [5]))).toMatchObject({ ok: false });
      expect(await h.redis.xlen(REDIS_KEYS.frames(runId))).toBe(0);

      for (const [a, j, ms] of [
        [a1!, j1!, 5],
        [a2!, j2!, 7],
      ] as const) {
        // The frame's own agentId is not trusted: it is stored as the authenticated agent's.
        expect(await a.sendFrame(testFrame({ runId, shardId: j.shardId, agentId: "agt_someone_else" }, 0, [ms]))).toEqual({ ok: true });
        expect(await a.end({ runId, shardId: j.shardId, status: "completed", frames: 1 })).toEqual({ ok: true });
      }
      const run = await h.waitForFinal(runId);
      expect(run.status).toBe("passed");
      expect(run.summary?.messages.sent).toBe(2);
      expect(run.summary?.latency.max).toBeLessThan(100); // the forged 999 ms never counted
      expect(await h.redis.xlen(REDIS_KEYS.frames(runId))).toBe(2);
      const stored = await listFrames(h.db.db, runId);
      expect(stored.map((f) => [f.shardId, f.agentId]).sort()).toEqual(
        [
          [j1!.shardId, a1!.agentId],
          [j2!.shardId, a2!.agentId],
        ].sort(),
      );

      // Lease over: a frame still in a1's spool for its own shard is its measurement and is kept
      // (the shard row names a1); a2 sending for a1's shard is refused by that same row.
      expect(await a1!.sendFrame(testFrame({ runId, shardId: j1!.shardId, agentId: a1!.agentId }, 1, [6]))).toEqual({ ok: true });
      const late = await a2!.sendFrame(testFrame({ runId, shardId: j1!.shardId, agentId: a2!.agentId }, 2, [6]));
      expect(late).toEqual({
        ok: false,
        error: `shard ${j1!.shardId} of run ${runId} is not leased to agent gw-lease-2 (${a2!.agentId}) (it is assigned to another agent); send frames only for the shard the hub assigned`,
        permanent: true,
      });
      expect(await h.redis.xlen(REDIS_KEYS.frames(runId))).toBe(3);
    } finally {
      a1?.close();
      a2?.close();
    }
  });

  it("refuses pool names a plan could not use, naming the rule", async () => {
    for (const pool of ["../../etc", "EU West", "a.b", "x".repeat(64)]) {
      await expect(h.connect({ name: "gw-bad-pool", pool })).rejects.toThrow(
        "invalid agent hello: pool: use lowercase letters, digits and dashes (1 to 63, starting with a letter or digit), e.g. default",
      );
    }
    expect(h.hub.poolWorkers().some((p) => !/^[a-z0-9-]+$/.test(p))).toBe(false);
  });

  it("limits pools per org, releases a pool's shard worker and Redis connection once its agents are gone, and recreates it for the next agent", async () => {
    // Earlier tests' pools are released once their agents left.
    await expect.poll(() => h.hub.poolWorkers(), { timeout: 5000 }).toEqual([]);
    await expect.poll(async () => (await redisClients()).shardWorkers, { timeout: 5000 }).toBe(0);
    const pools = Array.from({ length: MAX_POOLS }, (_, i) => `many-${i}`);
    const agents = await Promise.all(pools.map((pool) => h.connect({ name: `gw-${pool}`, pool })));
    expect(h.hub.poolWorkers().sort()).toEqual([...pools].sort());
    await expect.poll(async () => (await redisClients()).shardWorkers, { timeout: 5000 }).toBe(MAX_POOLS);
    const peak = (await redisClients()).all;

    // One more pool is refused, naming the limit; more agents in a pool the org has are not.
    await expect(h.connect({ name: "gw-one-too-many", pool: "many-more" })).rejects.toThrow(
      `pool limit reached: this organization already has ${MAX_POOLS} pools on this hub (HUB_MAX_POOLS_PER_ORG=${MAX_POOLS}; a pool counts until 0.5 s after its last agent left)`,
    );
    agents.push(await h.connect({ name: "gw-many-0-second", pool: "many-0" }));
    // The limit is per org: another org's agent gets a pool of its own.
    const org = "org_gateway_pools";
    await h.db.db.insert(schema.orgs).values({ id: org, name: "Pools" });
    const { secret } = await createAgentToken(h.db.db, { orgId: org, name: "pools", pool: "many-more" });
    agents.push(await h.connect({ token: secret, name: "gw-other-org" }));
    expect(h.hub.poolWorkers()).toContain(`${org}.many-more`);

    for (const a of agents) a.close();
    await expect.poll(() => h.hub.poolWorkers(), { timeout: 5000 }).toEqual([]);
    await expect.poll(async () => (await redisClients()).shardWorkers, { timeout: 5000 }).toBe(0);
    expect((await redisClients()).all).toBeLessThanOrEqual(peak - MAX_POOLS);

    // The next agent of a released pool gets a worker again, and runs shards.
    const back = await h.connect({ name: "gw-back", pool: "many-3" });
    expect(h.hub.poolWorkers()).toEqual(["many-3"]);
    const runId = await h.startRun(testPlan({ agents: { pool: "many-3" }, duration: "1s" }));
    const job = await back.until((r) => r.assign.find((j) => j.runId === runId), 10_000, "shard.assign");
    const start = await back.nextStart();
    expect(await back.sendFrame(testFrame({ runId, shardId: job.shardId, agentId: back.agentId }, 0, [5], { startedAt: start.startAt }))).toEqual({ ok: true });
    expect(await back.end({ runId, shardId: job.shardId, status: "completed", frames: 1 })).toEqual({ ok: true });
    expect((await h.waitForFinal(runId)).status).toBe("passed");
    back.close();
    await expect.poll(() => h.hub.poolWorkers(), { timeout: 5000 }).toEqual([]);
  });

  it("shuts down without losing a running run: aborts it after the grace period and records why", async () => {
    const a = await h.connect({ name: "gw-shutdown", pool: "shutdown" });
    const runId = await h.startRun(testPlan({ agents: { pool: "shutdown" }, duration: "60s" }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    await a.nextStart();
    await a.sendFrame(testFrame({ runId, shardId: job.shardId, agentId: a.agentId }, 0, [5]));
    // The agent ends its shard when told to abort, like the real one.
    a.socket.on("shard.abort", () => void a.end({ runId, shardId: job.shardId, status: "aborted", frames: 1 }));
    await h.hub.close();
    const run = await getRun(h.db.db, runId);
    expect(run).toMatchObject({ status: "aborted", reason: "hub shutting down" });
    expect(run?.summary?.messages.sent).toBe(1);
    a.close();
  });
});
