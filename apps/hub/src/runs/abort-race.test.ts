import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_KEYS, planSchema, type Plan } from "@volley/contracts";
import { finishRun, getRunOfAnyOrg, listAgents } from "@volley/db";
import { startTargetsAndAgent, type RealAgent } from "../test-support/real-agent";
import { useHubHarness } from "../test-support/use-hub-harness";

/**
 * Aborts racing shard assignment must never wedge an agent. A real agent process (its ShardSlot
 * refuses a second shard while it holds one) on a real ws echo target; 15 one-second runs are
 * queued at once and aborted 50 ms apart, then 30 more each aborted 0–69 ms after it was queued, the way web aborts them (a queued run is finished by web,
 * then the abort is published; a running one is only published). Some aborts land before their
 * shard's assign, some while it arms, some after it ran. Afterwards the agent must be free: listed
 * online, not busy, and a fresh run on it passes.
 */
const h = useHubHarness({ abortEndTimeoutMs: 2000, storeWaitMs: 5000 });
let real: RealAgent;
let echoUrl = "";

beforeAll(async () => {
  real = await startTargetsAndAgent(h.hubUrl, "racer", "race");
  echoUrl = real.echoUrl;
});
afterAll(async () => {
  for (const p of real?.processes.reverse() ?? []) await p.stop(3000);
});

const tail = () => real.output.slice(-30).join("\n");

function shortPlan(name: string): Plan {
  return planSchema.parse({
    name,
    target: { url: echoUrl, protocol: "ws" },
    connections: { count: 2, rate: 100 },
    scenario: { kind: "echo", message: { bytes: 32, rate: 5 }, duration: "1s" },
    agents: { pool: "race", count: 1 },
  });
}

/** What web's POST /runs/{id}/abort does. */
async function abort(runId: string): Promise<void> {
  const row = await getRunOfAnyOrg(h.db.db, runId);
  if (row?.status === "queued") await finishRun(h.db.db, runId, { status: "aborted", reason: "aborted by user" });
  await h.redis.publish(REDIS_KEYS.abort, JSON.stringify({ runId, reason: "aborted by user" }));
}

describe("aborts racing the shard assignment", () => {
  it("leave no agent wedged: after 45 runs aborted 50 ms apart, the agent is online and a fresh run passes", async () => {
    // Half are queued together and aborted 50 ms apart (aborts land on queued, arming and running
    // shards); the other half are each aborted a varying few ms after being queued, so aborts land
    // all through their assignment (before the assign, while it is in flight, after the arm).
    const ids: string[] = [];
    for (let i = 0; i < 15; i++) ids.push(await h.startRun(shortPlan(`race ${i}`)));
    for (const id of ids) {
      await abort(id);
      await new Promise((r) => setTimeout(r, 50));
    }
    for (let i = 0; i < 30; i++) {
      const id = await h.startRun(shortPlan(`race ${15 + i}`));
      ids.push(id);
      await new Promise((r) => setTimeout(r, (i * 3) % 70));
      await abort(id);
      await new Promise((r) => setTimeout(r, 50));
    }
    const finals = [];
    for (const id of ids) finals.push(await h.waitForFinal(id, 120_000));
    const counts: Record<string, number> = {};
    for (const r of finals) counts[r.status] = (counts[r.status] ?? 0) + 1;
    console.info(`abort race: ${JSON.stringify(counts)}`);

    // Free again: listed online (not busy), and it takes a new shard and runs it to a pass.
    await expect.poll(async () => (await listAgents(h.db.db)).find((a) => a.name === "racer")?.status, { timeout: 15_000, interval: 200 }).toBe("online");
    const fresh = await h.waitForFinal(await h.startRun(shortPlan("after the race")), 60_000);
    expect(fresh.status, `${fresh.reason}\n${tail()}`).toBe("passed");
    expect(
      real.output.some((l) => /busy with shard/.test(l)),
      tail(),
    ).toBe(false);
  }, 240_000);
});

describe("heartbeats reconcile what an agent holds with the hub's leases", () => {
  it("tell an agent holding a shard the hub does not supervise to drop it", async () => {
    const a = await h.connect({ name: "stray", pool: "recon-stray" });
    await a.heartbeat(true, { runId: "run_gone", shardId: "shd_gone", state: "armed" });
    expect(await a.nextAbort(5000)).toMatchObject({ shardId: "shd_gone", reason: expect.stringMatching(/no longer supervises this shard/) });
  });

  it("free an agent the hub thinks busy once the agent says, after arming, that it holds nothing", async () => {
    const a = await h.connect({ name: "forgetful", pool: "recon-idle" });
    const plan = shortPlan("forgotten");
    const runId = await h.startRun({ ...plan, agents: { pool: "recon-idle", count: 1 }, scenario: { ...plan.scenario, duration: "30s" } });
    const job = await a.until((r) => r.assign.at(-1), 10_000, "shard.assign");
    await a.nextStart(10_000);
    // A heartbeat sent after the arm ack, holding nothing: the agent let go without its shard.end arriving.
    await a.heartbeat(false);
    const run = await h.waitForFinal(runId, 20_000);
    expect(run.status).toBe("errored");
    expect(run.reason).toMatch(new RegExp(`reported holding no shard \\(it let go of shard ${job.shardId}`));
    await expect.poll(async () => (await listAgents(h.db.db)).find((x) => x.id === a.agentId)?.status, { timeout: 5000 }).toBe("online");
  });
});
