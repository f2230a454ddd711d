import { describe, expect, it } from "vitest";
import { getRunOfAnyOrg, listShards, queuePlaces } from "@volley/db";
import type { ScriptedAgent } from "../test-support/scripted-agent";
import { testFrame, testPlan } from "../test-support/fixtures";
import { useHubHarness } from "../test-support/use-hub-harness";

/**
 * Runs beyond the agents there are wait in their pool's line (runs/agent-line.ts), first come first
 * served, and run once agents are free; none errors because agents are busy. The arm timeout is short
 * here: before the line, a run whose shard waited for a busy agent longer than it errored.
 */
const h = useHubHarness({ armTimeoutMs: 2000, storeWaitMs: 3000, abortEndTimeoutMs: 2000 });

/**
 * Plays every shard it is given, one at a time, as apps/agent would: arm, start, one frame, end;
 * each shard is held `holdMs` after its start. Records the run order and the most shards held at once.
 */
function serve(agent: ScriptedAgent, holdMs: number) {
  const order: string[] = [];
  let running = 0;
  let maxRunning = 0;
  let stopped = false;
  const loop = (async () => {
    let done = 0;
    while (!stopped) {
      const job = await agent.until((r) => r.assign[done], 500, "shard.assign").catch(() => undefined);
      if (!job) continue;
      done++;
      order.push(job.runId);
      running++;
      maxRunning = Math.max(maxRunning, running);
      await agent.until((r) => r.start.find((s) => s.shardId === job.shardId), 10_000, "shard.start");
      await new Promise((r) => setTimeout(r, holdMs));
      await agent.sendFrame(testFrame({ runId: job.runId, shardId: job.shardId, agentId: agent.agentId }, 0, [2, 3]));
      await agent.end({ runId: job.runId, shardId: job.shardId, status: "completed", frames: 1 });
      running--;
    }
  })();
  return {
    order,
    get maxRunning() {
      return maxRunning;
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

describe("runs queued beyond the pool's agents", () => {
  it("wait in order, report their place in the line, and all pass on one agent", async () => {
    const agent = await h.connect({ name: "lone", pool: "line" });
    const player = serve(agent, 300);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await h.startRun(testPlan({ name: `queued ${i}`, agents: { pool: "line" } })));

    // While they wait: places 1..n in creation order among the queued ones (the first is already running).
    await expect.poll(async () => (await getRunOfAnyOrg(h.db.db, ids[0]!))?.status, { timeout: 10_000 }).not.toBe("queued");
    const places = await queuePlaces(h.db.db);
    const waiting = ids.filter((id) => places.has(id));
    expect(waiting.length).toBeGreaterThanOrEqual(5);
    expect(waiting.map((id) => places.get(id)!.position)).toEqual(waiting.map((_, i) => i + 1));
    expect(places.get(waiting[0]!)).toEqual({ pool: "line", position: 1, ahead: 0 });

    const finals = [];
    for (const id of ids) finals.push(await h.waitForFinal(id, 60_000));
    await player.stop();
    expect(finals.map((r) => `${r.status} ${r.reason ?? ""}`.trim())).toEqual(ids.map(() => "passed"));
    // First come, first served, and never two shards on the agent at once.
    expect(player.order).toEqual(ids);
    expect(player.maxRunning).toBe(1);
    // Each took longer than the arm timeout to reach its turn (8 × 300 ms+), yet none timed out.
    const last = finals.at(-1)!;
    expect(last.startedAt!.getTime() - last.createdAt.getTime()).toBeGreaterThan(2000);
    expect((await listShards(h.db.db, ids.at(-1)!))[0]?.status).toBe("completed");
  }, 90_000);

  it("ends a run still waiting after agents.maxWait as errored, naming the wait and the pool", async () => {
    const agent = await h.connect({ name: "held", pool: "line-wait" });
    const long = await h.startRun(testPlan({ name: "holds the agent", agents: { pool: "line-wait" }, duration: "20s" }));
    await agent.nextStart(10_000);
    const waiter = await h.startRun(testPlan({ name: "gives up", agents: { pool: "line-wait", maxWait: "1s" } }));
    const run = await h.waitForFinal(waiter, 15_000);
    expect(run.status).toBe("errored");
    expect(run.reason).toMatch(/^waited agents\.maxWait \(1 s\) for an agent in pool 'line-wait' and none was free \(position 1 in its queue\)/);
    expect(await listShards(h.db.db, waiter)).toEqual([]);
    // The run holding the agent is untouched.
    expect((await getRunOfAnyOrg(h.db.db, long))?.status).toBe("running");
    const job = agent.received.assign[0]!;
    await agent.end({ runId: job.runId, shardId: job.shardId, status: "completed", frames: 0 });
  }, 30_000);

  it("errors a run whose pool has fewer connected agents than it asks for, once they have not come within the arm timeout", async () => {
    await h.connect({ name: "only-one", pool: "line-short" });
    const runId = await h.startRun(testPlan({ name: "wants two", agents: { pool: "line-short", count: 2 } }));
    const run = await h.waitForFinal(runId, 15_000);
    expect(run.status).toBe("errored");
    expect(run.reason).toBe("plan asks for 2 agents; pool 'line-short' has 1 connected (waited 2 s for more to connect)");
  }, 30_000);
});
