import { COUNTERS, planSchema, type IntervalFrame } from "@volley/contracts";
import { describe, expect, it } from "vitest";
import type { ScriptedAgent } from "../test-support/scripted-agent";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testFrame, testHealth, testPlan } from "../test-support/fixtures";

// A capacity search is judged on its steps: the hub's verdict when none of them could be judged.

const h = useHubHarness({ armTimeoutMs: 10_000, storeWaitMs: 5000 });

const capacityPlan = (pool: string) =>
  planSchema.parse({
    ...testPlan({ agents: { pool }, duration: "10s" }),
    sweep: { from: 1000, step: 1000, steps: 3, hold: "1s", gap: "1s", stopWhen: { p95: "200ms" } },
  });

async function started(a: ScriptedAgent, runId: string) {
  const job = await a.until((r) => r.assign.find((j) => j.runId === runId), 10_000, "shard.assign");
  const start = await a.until((r) => r.start.find((s) => s.shardId === job.shardId), 10_000, "shard.start");
  return { ids: { runId, shardId: job.shardId, agentId: a.agentId }, startAt: start.startAt };
}

/** A one-second hold of step `index` at `rate`/s, fast replies; `limited`: the agent says it limited the step. */
function stepFrame(ids: Parameters<typeof testFrame>[0], index: number, startAt: number, limited?: string): IntervalFrame {
  const frame = testFrame(
    ids,
    index,
    Array.from({ length: 20 }, () => 5),
    { startedAt: startAt + index * 1000 },
  );
  return {
    ...frame,
    health: limited ? { ...testHealth, cpu: 99, saturated: true } : testHealth,
    step: { index, rate: 1000 * (index + 1), per: "connection", ...(limited ? { generatorLimited: limited } : {}) },
  };
}

describe("capacity search outcome", () => {
  it("ends inconclusive, with the reason, when the load generator limited the first step: no step was judged", async () => {
    const a = await h.connect({ name: "cap-limited", pool: "cap-limited" });
    const runId = await h.startRun(capacityPlan("cap-limited"));
    const { ids, startAt } = await started(a, runId);
    const why = "the agent was saturated in 1 of 1 s: CPU 99% > 90%";
    expect(await a.sendFrame(stepFrame(ids, 0, startAt, why))).toEqual({ ok: true });
    await a.end({ runId, shardId: ids.shardId, status: "completed", frames: 1 });

    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("inconclusive");
    expect(run.reason).toBe(
      `no step of the capacity search could be judged: the step at 1000/s per connection was limited by the load generator, not the server (${why}); add agents (or start the sweep at a lower rate) and rerun`,
    );
    expect(run.summary?.capacity).toMatchObject({ rate: null, agentSaturated: true });
  });

  it("a users sweep whose first step's arrivals found every user slot busy ends inconclusive, in users/s", async () => {
    const a = await h.connect({ name: "cap-users", pool: "cap-users" });
    const plan = planSchema.parse({
      ...testPlan({ agents: { pool: "cap-users" }, duration: "10s" }),
      scenario: { kind: "users", arrivalRate: 20, duration: "10s" },
      flow: { steps: [{ connect: {} }, { disconnect: true }] },
      sweep: { step: 20, steps: 3, hold: "1s", gap: "1s", stopWhen: { p95: "200ms", usersFailedRate: 1 } },
    });
    const runId = await h.startRun(plan);
    const { ids, startAt } = await started(a, runId);
    const why = "7 arrivals found all 10 user slots busy (connections.count): raise connections.count";
    const frame = stepFrame(ids, 0, startAt, why);
    frame.health = testHealth;
    frame.step = { index: 0, rate: 20, per: "aggregate", generatorLimited: why };
    frame.counters = { ...frame.counters, [COUNTERS.usersStarted]: 13, [COUNTERS.usersCompleted]: 13, [COUNTERS.usersDropped]: 7 };
    expect(await a.sendFrame(frame)).toEqual({ ok: true });
    await a.end({ runId, shardId: ids.shardId, status: "completed", frames: 1 });

    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("inconclusive");
    expect(run.reason).toContain(`the step at 20 users/s was limited by the load generator, not the server (${why})`);
    expect(run.summary?.steps?.[0]?.users).toEqual({ started: 13, completed: 13, failed: 0, dropped: 7 });
  });

  it("passes when a step held before the agent limited the next, its capacity a lower bound", async () => {
    const a = await h.connect({ name: "cap-floor", pool: "cap-floor" });
    const runId = await h.startRun(capacityPlan("cap-floor"));
    const { ids, startAt } = await started(a, runId);
    expect(await a.sendFrame(stepFrame(ids, 0, startAt))).toEqual({ ok: true });
    expect(await a.sendFrame(stepFrame(ids, 1, startAt, "the agent was saturated in 1 of 1 s: CPU 99% > 90%"))).toEqual({ ok: true });
    await a.end({ runId, shardId: ids.shardId, status: "completed", frames: 2 });

    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("passed");
    expect(run.reason).toMatch(/^capacity at least 1000\/s per connection, a lower bound: /);
  });
});
