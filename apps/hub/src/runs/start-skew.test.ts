import { describe, expect, it } from "vitest";
import type { ShardJob } from "@volley/contracts";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";

const h = useHubHarness(13, { armTimeoutMs: 5000, storeWaitMs: 5000 });

describe("measured start skew", () => {
  it("records the agents' reported actual starts vs the planned instant on the run row and in the summary", async () => {
    const [a1, a2] = [await h.connect({ name: "skew-early", pool: "skew" }), await h.connect({ name: "skew-late", pool: "skew" })];
    const runId = await h.startRun(testPlan({ agents: { pool: "skew", count: 2 }, connections: { count: 4 } }));
    const jobs = (await Promise.all([a1, a2].map((a) => a.until((r) => r.assign.find((j) => j.runId === runId))))) as [ShardJob, ShardJob];
    const [s1, s2] = await Promise.all([a1.nextStart(), a2.nextStart()]);
    expect(s1.startAt).toBe(s2.startAt);
    const plannedAt = s1.startAt;
    // One agent began 0.4 ms after the planned instant, the other 7.25 ms after.
    const late = [0.4, 7.25];
    for (const [i, a] of [a1, a2].entries()) {
      const ids = { runId, shardId: jobs[i]!.shardId, agentId: a.agentId };
      const frame = { ...testFrame(ids, 0, [5], { startedAt: plannedAt }), start: { plannedAt, startedAt: plannedAt + late[i]! } };
      expect(await a.sendFrame(frame)).toEqual({ ok: true });
      expect(await a.sendFrame(testFrame(ids, 1, [5], { startedAt: plannedAt + 1000 }))).toEqual({ ok: true });
      await a.end({ runId, shardId: ids.shardId, status: "completed", frames: 2 });
    }
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("passed");
    expect(run.startSkewMs).toBe(6.85);
    expect(run.startLateMs).toBe(7.25);
    expect(run.summary?.start).toEqual({
      plannedAt,
      skewMs: 6.85,
      maxLateMs: 7.25,
      shards: expect.arrayContaining([
        { index: jobs[0]!.index, agentId: a1.agentId, agentName: "skew-early", startedAt: plannedAt + 0.4, lateMs: 0.4 },
        { index: jobs[1]!.index, agentId: a2.agentId, agentName: "skew-late", startedAt: plannedAt + 7.25, lateMs: 7.25 },
      ]),
    });
    expect(run.summary?.start?.shards).toHaveLength(2);
  });

  it("leaves the report out when agents send none (older agents), keeping the frame-based skew", async () => {
    const a = await h.connect({ name: "skew-silent", pool: "skew-old" });
    const runId = await h.startRun(testPlan({ agents: { pool: "skew-old" } }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    const start = await a.nextStart();
    await a.sendFrame(testFrame({ runId, shardId: job.shardId, agentId: a.agentId }, 0, [5], { startedAt: start.startAt }));
    await a.end({ runId, shardId: job.shardId, status: "completed", frames: 1 });
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("passed");
    expect(run.summary?.start).toBeUndefined();
    expect(run.startLateMs).toBeNull();
    expect(run.startSkewMs).toBeNull(); // one shard: no spread
  });
});
