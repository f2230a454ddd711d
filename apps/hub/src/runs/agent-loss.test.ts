import { afterAll, describe, expect, it } from "vitest";
import { planSchema, type ShardJob } from "@volley/contracts";
import { listAgents, listFrames, listShards } from "@volley/db";
import { startApp, type ManagedProcess, TARGETS_ON_FREE_PORTS } from "@volley/devstack";
import type { ScriptedAgent } from "../test-support/scripted-agent";
import { TEST_AGENT_TOKEN } from "../test-support/hub-harness";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";

const h = useHubHarness({ armTimeoutMs: 15_000, agentGraceMs: 1000, abortEndTimeoutMs: 3000, storeWaitMs: 5000 });
const processes: ManagedProcess[] = [];

// Runs before the harness's own afterAll (vitest runs afterAll hooks last-registered first).
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop(2000)));
});

const idsOf = (a: ScriptedAgent, job: ShardJob) => ({ runId: job.runId, shardId: job.shardId, agentId: a.agentId });

/** Both agents armed and started; returns each one's job, in the agents' order. */
async function startTwo(a1: ScriptedAgent, a2: ScriptedAgent, runId: string): Promise<[ShardJob, ShardJob]> {
  const jobs = await Promise.all([a1, a2].map((a) => a.until((r) => r.assign.find((j) => j.runId === runId), 10_000, "shard.assign")));
  await Promise.all([a1.nextStart(), a2.nextStart()]);
  return jobs as [ShardJob, ShardJob];
}

/** A dropped connection, not a goodbye: the transport goes away under the Socket.IO session. */
const dropConnection = (a: ScriptedAgent) => a.socket.io.engine.close();

describe("an agent lost mid-run", () => {
  it("onLoss: degrade — the other agent finishes, the run ends degraded naming the lost agent, every frame kept", async () => {
    const [a1, a2] = [await h.connect({ name: "keeps-going", pool: "degrade" }), await h.connect({ name: "goes-away", pool: "degrade" })];
    const runId = await h.startRun(testPlan({ agents: { pool: "degrade", count: 2, onLoss: "degrade" }, duration: "30s" }));
    const [j1, j2] = await startTwo(a1, a2, runId);
    expect(await a2.sendFrame(testFrame(idsOf(a2, j2), 0, [9]))).toEqual({ ok: true });
    expect(await a1.sendFrame(testFrame(idsOf(a1, j1), 0, [5]))).toEqual({ ok: true });
    dropConnection(a2);
    // Past the grace period the run is still running and the survivor was not told to stop.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await listShards(h.db.db, runId)).find((s) => s.id === j2.shardId)?.status).toBe("errored");
    expect(a1.received.abort).toHaveLength(0);
    expect(await a1.sendFrame(testFrame(idsOf(a1, j1), 1, [6]))).toEqual({ ok: true });
    await a1.end({ runId, shardId: j1.shardId, status: "completed", frames: 2 });

    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("degraded");
    expect(run.reason).toMatch(
      new RegExp(
        `^shard ${j2.index + 1}/2: agent goes-away \\(${a2.agentId}\\) lost: disconnected \\(.+\\) and did not reconnect within 1 s; the other agents finished 1 of 2 shards \\(agents.onLoss: degrade\\)$`,
      ),
    );
    expect(await listFrames(h.db.db, runId)).toHaveLength(3);
    expect(run.summary?.messages.sent).toBe(3);
  });

  it("onLoss: error (the default) — the other agent is stopped and the run errors naming the lost agent, frames kept", async () => {
    const [a1, a2] = [await h.connect({ name: "stopped", pool: "strict" }), await h.connect({ name: "vanishes", pool: "strict" })];
    const plan = testPlan({ agents: { pool: "strict", count: 2 }, duration: "30s" });
    expect(plan.agents.onLoss).toBeUndefined();
    const runId = await h.startRun(plan);
    const [j1, j2] = await startTwo(a1, a2, runId);
    await a1.sendFrame(testFrame(idsOf(a1, j1), 0, [5]));
    await a2.sendFrame(testFrame(idsOf(a2, j2), 0, [7]));
    a1.socket.on("shard.abort", () => void a1.end({ runId, shardId: j1.shardId, status: "aborted", frames: 1 }));
    dropConnection(a2);
    const abort = await a1.nextAbort(10_000);
    expect(abort.reason).toContain(`agent vanishes (${a2.agentId}) lost`);
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("errored");
    expect(run.reason).toMatch(
      new RegExp(
        `^shard ${j2.index + 1}/2: agent vanishes \\(${a2.agentId}\\) lost: .+; the other agents were stopped \\(agents.onLoss: error; "degrade" would let them finish\\)$`,
      ),
    );
    expect(await listFrames(h.db.db, runId)).toHaveLength(2);
    expect(run.summary?.messages.sent).toBe(2);
  });

  it("a real agent process killed with SIGKILL mid-run: degraded, the survivor's load completes, the victim's stored frames stay", async () => {
    const output: string[] = [];
    const targets = startApp("targets", { ...process.env, ...TARGETS_ON_FREE_PORTS, LOG_LEVEL: "info" }, (l) => output.push(`[targets] ${l}`));
    processes.push(targets);
    const echoUrl = (await targets.waitFor(/ws echo listening on ws:\/\/\S+/, 60_000)).match(/ws:\/\/[^\s"]+/)![0];
    const realAgent = (name: string) => {
      const env = { ...process.env, HUB_URL: h.hubUrl, AGENT_TOKEN: TEST_AGENT_TOKEN, AGENT_NAME: name, AGENT_POOL: "sigkill", LOG_LEVEL: "info" };
      const p = startApp("agent", env, (l) => output.push(`[${name}] ${l}`));
      processes.push(p);
      return p;
    };
    const [survivor, victim] = [realAgent("survivor"), realAgent("victim")];
    await Promise.all([survivor.waitFor(/connected to/, 60_000), victim.waitFor(/connected to/, 60_000)]);

    const plan = planSchema.parse({
      name: "sigkill",
      target: { url: echoUrl, protocol: "ws" },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", message: { bytes: 32, rate: 5 }, duration: "8s" },
      agents: { pool: "sigkill", count: 2, onLoss: "degrade" },
    });
    const runId = await h.startRun(plan);
    // Kill the victim once some of its frames are stored: those must survive it.
    const victimShard = async () => {
      const victimId = (await listAgents(h.db.db)).find((a) => a.name === "victim")?.id;
      const frames = await listFrames(h.db.db, runId);
      return (await listShards(h.db.db, runId)).find((s) => s.agentId === victimId && frames.some((f) => f.shardId === s.id));
    };
    await expect.poll(victimShard, { timeout: 30_000, interval: 200 }).toBeDefined();
    const shard = (await victimShard())!;
    victim.child.kill("SIGKILL");
    expect(await victim.exited).toBe("SIGKILL");
    const storedBefore = (await listFrames(h.db.db, runId)).filter((f) => f.shardId === shard.id).length;

    const run = await h.waitForFinal(runId, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${output.slice(-30).join("\n")}`);
    });
    expect(run.status, `${run.reason}\n${output.slice(-30).join("\n")}`).toBe("degraded");
    expect(run.reason).toMatch(
      new RegExp(
        `^shard ${shard.index + 1}/2: agent victim \\(${shard.agentId}\\) lost: .+ and did not reconnect within 1 s; the other agents finished 1 of 2 shards`,
      ),
    );
    const shards = await listShards(h.db.db, runId);
    expect(shards.find((s) => s.id === shard.id)).toMatchObject({ status: "errored" });
    expect(shards.find((s) => s.id !== shard.id)).toMatchObject({ status: "completed" });
    const frames = await listFrames(h.db.db, runId);
    expect(frames.filter((f) => f.shardId === shard.id).length).toBeGreaterThanOrEqual(storedBefore);
    // The survivor ran its whole 8 s schedule.
    expect(frames.filter((f) => f.shardId !== shard.id).length).toBeGreaterThanOrEqual(8);
    expect(run.summary?.messages.received).toBeGreaterThan(0);
    // Both real agents reported their actual start (on their first frame), the victim's before it died.
    expect(run.summary?.start?.shards.map((s) => s.agentName).sort()).toEqual(["survivor", "victim"]);
    expect(run.startSkewMs).toBe(run.summary?.start?.skewMs);
    expect(run.startLateMs).toBe(run.summary?.start?.maxLateMs);
    expect(Number.isFinite(run.startSkewMs)).toBe(true);
  });
});
