import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import type { HeldShard } from "@volley/contracts";
import { createAgentToken, DEFAULT_ORG_ID, insertRun, insertShards, listAgents, listAudit, listShards, markRunRunning, schema, updateShard } from "@volley/db";
import { createRedis } from "@volley/queue";
import { RunCoordinator } from "../coordination/run-coordinator";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";

/**
 * What a hub does with an agent that connects already holding a shard (the hub that assigned it
 * restarted). The shard, its row and the run's coordination state are written the way the dead
 * hub left them; the agent is a scripted one whose hello names the shard. The whole restart, with
 * real processes, is in runs/hub-restart.test.ts.
 */
const h = useHubHarness({ abortEndTimeoutMs: 2000 });
let coordinator: RunCoordinator;
const closers: Array<() => void> = [];

beforeAll(async () => {
  const [commands, subscriber] = [createRedis(h.redisUrl), createRedis(h.redisUrl)];
  closers.push(
    () => commands.disconnect(),
    () => subscriber.disconnect(),
  );
  coordinator = new RunCoordinator(commands, subscriber, pino({ level: "silent" }));
  await coordinator.start();
});
afterAll(() => {
  for (const c of closers) c();
});

/** An agent row (by a first, shard-less connection) and a running shard of a started run assigned to it. */
async function leftBehind(name: string, opts: { started: boolean; assignTo?: "self" | "other" }) {
  const instanceId = `${name}-instance`;
  const first = await h.connect({ name, instanceId, pool: name });
  first.close();
  const other = await h.connect({ name: `${name}-other`, pool: `${name}-other` });
  const plan = testPlan({ agents: { pool: name }, duration: "5s" });
  const run = await insertRun(h.db.db, { plan });
  const [shard] = await insertShards(h.db.db, run.id, [plan]);
  await markRunRunning(h.db.db, run.id);
  // Through the shard lifecycle as the runner moves it: taken by an agent, then started.
  await updateShard(h.db.db, shard!.id, { status: "assigned", agentId: opts.assignTo === "other" ? other.agentId : first.agentId });
  await updateShard(h.db.db, shard!.id, { status: "running", startedAt: new Date() });
  if (opts.started) await coordinator.publishStart(run.id, Date.now() - 1000);
  const held: HeldShard = { runId: run.id, shardId: shard!.id, state: "running" };
  const reconnect = () => h.connect({ name, instanceId, pool: name, shard: held });
  return { runId: run.id, shardId: shard!.id, agentId: first.agentId, reconnect };
}

describe("an agent that connects holding a shard", () => {
  it("is adopted: its frames and shard.end are accepted, the shard's end is recorded, and it is idle again after", async () => {
    const s = await leftBehind("adoptee", { started: true });
    const a = await s.reconnect();
    expect(await a.sendFrame(testFrame({ runId: s.runId, shardId: s.shardId, agentId: s.agentId }, 0, [3, 4]))).toEqual({ ok: true });
    expect(await a.end({ runId: s.runId, shardId: s.shardId, status: "completed", frames: 1 })).toEqual({ ok: true });
    await expect.poll(async () => (await coordinator.getState(s.runId)).ended.get(s.shardId)?.status, { timeout: 5000 }).toBe("completed");
    expect((await listShards(h.db.db, s.runId))[0]).toMatchObject({ status: "completed", frames: 1 });
    expect(a.received.abort).toEqual([]);
    // Released: the next shard of its pool may go to it (its status is online, not busy).
    await expect.poll(async () => (await listAgents(h.db.db)).find((x) => x.id === s.agentId)?.status, { timeout: 5000 }).toBe("online");
  });

  it("is told to stop a shard whose run never started (its hub died while arming)", async () => {
    const s = await leftBehind("unstarted", { started: false });
    const a = await s.reconnect();
    const abort = await a.nextAbort(5000);
    expect(abort).toMatchObject({ shardId: s.shardId, reason: "the hub that armed this shard stopped before the run started" });
    expect(await a.end({ runId: s.runId, shardId: s.shardId, status: "aborted", error: abort.reason, frames: 0 })).toEqual({ ok: true });
    await expect.poll(async () => (await coordinator.getState(s.runId)).ended.get(s.shardId)?.status, { timeout: 5000 }).toBe("aborted");
  });

  it("is told to stop a shard assigned to another agent, and that shard's row is left alone", async () => {
    const s = await leftBehind("impostor", { started: true, assignTo: "other" });
    const a = await s.reconnect();
    const abort = await a.nextAbort(5000);
    expect(abort.reason).toBe("shard not resumed by the restarted hub: the shard is assigned to another agent");
    await a.end({ runId: s.runId, shardId: s.shardId, status: "aborted", frames: 0 });
    await new Promise((r) => setTimeout(r, 300));
    expect((await listShards(h.db.db, s.runId))[0]?.status).toBe("running");
    expect((await coordinator.getState(s.runId)).ended.has(s.shardId)).toBe(false);
  });

  it("is refused when the shard is not its own: an agent of another org or another agent of the same org gets no lease, its frames and shard.end are refused, it is told to drop the shard, the attempt is audited, and the owner still adopts it", async () => {
    const s = await leftBehind("victim", { started: true });
    const otherOrg = "org_adoption_intruder";
    await h.db.db.insert(schema.orgs).values({ id: otherOrg, name: "Intruders" });
    const { secret } = await createAgentToken(h.db.db, { orgId: otherOrg, name: "intruder", pool: "intruders" });
    const held: HeldShard = { runId: s.runId, shardId: s.shardId, state: "running" };
    const foreign = await h.connect({ token: secret, name: "intruder", shard: held });
    const neighbour = await h.connect({ name: "neighbour", pool: "victim", shard: held });
    // Another org's run reads as missing: the intruder learns nothing about it.
    for (const [a, why] of [
      [foreign, "no such shard"],
      [neighbour, "the shard is assigned to another agent"],
    ] as const) {
      expect(await a.nextAbort(5000)).toMatchObject({ shardId: s.shardId, reason: `shard not resumed by the restarted hub: ${why}` });
      const ack = await a.sendFrame(testFrame({ runId: s.runId, shardId: s.shardId, agentId: a.agentId }, 0, [1, 1]));
      expect(ack.ok).toBe(false);
      if (!ack.ok) expect(ack.error).toMatch(new RegExp(`^shard ${s.shardId} of run ${s.runId} is not leased to agent ${a.name} \\(${a.agentId}\\)`));
      expect((await a.end({ runId: s.runId, shardId: s.shardId, status: "completed", frames: 1 })).ok).toBe(false);
    }
    const refusals = (rows: Awaited<ReturnType<typeof listAudit>>) =>
      rows.filter((e) => e.action === "agent.shard_claim_refused").map((e) => ({ actor: e.actor, runId: e.runId }));
    expect(refusals(await listAudit(h.db.db, DEFAULT_ORG_ID))).toEqual(
      expect.arrayContaining([
        { actor: `agent:${foreign.agentId}`, runId: s.runId },
        { actor: `agent:${neighbour.agentId}`, runId: s.runId },
      ]),
    );
    // The intruder's own org sees its agent tried, without the other org's run id.
    expect(refusals(await listAudit(h.db.db, otherOrg))).toEqual([{ actor: `agent:${foreign.agentId}`, runId: null }]);
    expect((await coordinator.getState(s.runId)).ended.has(s.shardId)).toBe(false);

    const owner = await s.reconnect();
    expect(await owner.sendFrame(testFrame({ runId: s.runId, shardId: s.shardId, agentId: s.agentId }, 0, [3, 4]))).toEqual({ ok: true });
    expect(await owner.end({ runId: s.runId, shardId: s.shardId, status: "completed", frames: 1 })).toEqual({ ok: true });
    await expect.poll(async () => (await coordinator.getState(s.runId)).ended.get(s.shardId)?.status, { timeout: 5000 }).toBe("completed");
    expect(owner.received.abort).toEqual([]);
  });
});
