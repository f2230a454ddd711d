import { describe, expect, it } from "vitest";
import type { ShardJob } from "@volley/contracts";
import { listShards, upsertAgent } from "@volley/db";
import { pino } from "pino";
import { startHub } from "../hub";
import { ScriptedAgent } from "../test-support/scripted-agent";
import { TEST_AGENT_TOKEN } from "../test-support/hub-harness";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testPlan } from "../test-support/fixtures";

// The dispatcher waits min(3 s, a third of armTimeoutMs) for a shard's planned agent: the full 3 s here.
const h = useHubHarness({ armTimeoutMs: 9000, agentGraceMs: 500, abortEndTimeoutMs: 2000, storeWaitMs: 5000 });

const agent = (name: string, pool: string, maxConnections: number, hubUrl?: string) => h.connect({ hubUrl, name, pool, capacity: { maxConnections } });

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Each agent's shard of the run, once assigned; then starts and ends them all so the run passes. */
async function shardsOf(runId: string, as: ScriptedAgent[], timeoutMs = 5000): Promise<ShardJob[]> {
  const jobs = await Promise.all(as.map((a) => a.until((r) => r.assign.find((j) => j.runId === runId), timeoutMs, `shard.assign of ${a.name}`)));
  await Promise.all(as.map((a, i) => a.until((r) => r.start.find((s) => s.shardId === jobs[i]!.shardId), 10_000, "shard.start")));
  for (const [i, a] of as.entries()) await a.end({ runId, shardId: jobs[i]!.shardId, status: "completed", frames: 0 });
  expect((await h.waitForFinal(runId)).status).toBe("passed");
  return jobs;
}

describe("shards weighted by agent capacity", () => {
  it("gives the bigger agent the bigger shard (2:1 capacity, 2:1 split) and the shards sum to the plan", async () => {
    // The small agent connects first: without the planned agent, it would be handed shard 1/2 (the big one).
    const small = await agent("agent-small", "weighted", 10_000);
    const big = await agent("agent-big", "weighted", 20_000);
    const runId = await h.startRun(
      testPlan({ agents: { pool: "weighted", count: 2 }, connections: { count: 30, rate: 90 }, message: { rate: 600, per: "aggregate" } }),
    );
    const [jSmall, jBig] = await shardsOf(runId, [small, big]);
    expect(jBig).toMatchObject({ index: 0, count: 2, agentId: big.agentId });
    expect(jSmall).toMatchObject({ index: 1, count: 2, agentId: small.agentId });
    expect([jBig!.plan.connections.count, jSmall!.plan.connections.count]).toEqual([20, 10]);
    expect([jBig!.plan.scenario.message.rate, jSmall!.plan.scenario.message.rate]).toEqual([400, 200]);
    expect([jBig!.plan.connections.rate, jSmall!.plan.connections.rate]).toEqual([60, 30]);
    const shards = await listShards(h.db.db, runId);
    expect(sum(shards.map((s) => s.plan.connections.count))).toBe(30);
    expect(sum(shards.map((s) => s.plan.scenario.message.rate))).toBe(600);
    expect(shards.map((s) => s.agentId)).toEqual([big.agentId, small.agentId]);
  });

  it('splits over every idle agent of the pool for agents.count "all"', async () => {
    const as = [await agent("agent-all-1", "everyone", 1_000), await agent("agent-all-3", "everyone", 3_000), await agent("agent-all-6", "everyone", 6_000)];
    const runId = await h.startRun(
      testPlan({ agents: { pool: "everyone", count: "all" }, connections: { count: 100 }, message: { rate: 50, per: "aggregate" } }),
    );
    const jobs = await shardsOf(runId, as);
    expect(jobs.map((j) => j.count)).toEqual([3, 3, 3]);
    expect(jobs.map((j) => j.agentId)).toEqual(as.map((a) => a.agentId));
    expect(jobs.map((j) => j.plan.connections.count)).toEqual([10, 30, 60]);
    expect(sum(jobs.map((j) => j.plan.scenario.message.rate))).toBe(50);
    expect(jobs.map((j) => j.plan.scenario.message.rate)).toEqual([5, 15, 30]);
  });

  it('errors a run whose agents.count is "all" when the pool has no idle agent, naming the pool', async () => {
    const runId = await h.startRun(testPlan({ agents: { pool: "deserted", count: "all" } }));
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("errored");
    expect(run.reason).toContain(`agents.count is "all" but pool 'deserted' has no idle agent`);
    expect(await listShards(h.db.db, runId)).toEqual([]);
  });

  it("errors a run that needs more connections than its agents hold before dispatching any shard, naming them", async () => {
    await agent("agent-tight-1", "tight", 1_000);
    await agent("agent-tight-2", "tight", 500);
    const runId = await h.startRun(testPlan({ agents: { pool: "tight", count: "all" }, connections: { count: 1_501 } }));
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("errored");
    expect(run.reason).toContain("connections.count is 1,501 but the 2 idle agents chosen from pool 'tight' hold at most 1,500");
    expect(run.reason).toContain("lower connections.count to 1,500 or less");
    expect(await listShards(h.db.db, runId)).toEqual([]);
  });

  it("hands each shard to its planned agent across hub replicas", async () => {
    const other = await startHub({
      databaseUrl: h.databaseUrl,
      redisUrl: h.redisUrl,
      agentToken: TEST_AGENT_TOKEN,
      port: 0,
      log: pino({ level: "silent" }),
      shutdownGraceMs: 1000,
      armTimeoutMs: 8000,
    });
    try {
      const small = await agent("agent-here", "spread", 5_000);
      const big = await agent("agent-there", "spread", 15_000, `http://127.0.0.1:${other.port}`);
      const runId = await h.startRun(testPlan({ agents: { pool: "spread", count: 2 }, connections: { count: 40 } }));
      const [jSmall, jBig] = await shardsOf(runId, [small, big]);
      expect([jBig!.agentId, jBig!.plan.connections.count]).toEqual([big.agentId, 30]);
      expect([jSmall!.agentId, jSmall!.plan.connections.count]).toEqual([small.agentId, 10]);
    } finally {
      await other.close();
    }
  });

  it("gives a shard whose planned agent never takes it to another idle agent after a bounded wait", async () => {
    // An agent row the hubs believe online (its hub died moments ago): planned for, never connected.
    const ghost = await upsertAgent(
      h.db.db,
      ScriptedAgent.hello({ hubUrl: h.hubUrl, name: "agent-ghost", pool: "stale", capacity: { maxConnections: 50_000 } }),
    );
    const real = await agent("agent-real", "stale", 1_000);
    const t0 = Date.now();
    const runId = await h.startRun(testPlan({ agents: { pool: "stale", count: 1 } }));
    const [job] = await shardsOf(runId, [real], 7000);
    expect(job!.agentId).toBe(ghost.id);
    expect(job!.plan.connections.count).toBe(10);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3000);
  });
});
