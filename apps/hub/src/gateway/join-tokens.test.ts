import { beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { Queue } from "bullmq";
import { createAgentToken, insertRun, listAgents, listAgentTokens, listShards, revokeAgentToken, schema, DEFAULT_ORG_ID } from "@volley/db";
import { enqueue, QUEUE_NAMES, runJob } from "@volley/queue";
import { ScriptedAgent } from "../test-support/scripted-agent";
import { startHubHarness, TEST_AGENT_TOKEN } from "../test-support/hub-harness";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";

const ORG = "org_tenant";
// No shared AGENT_TOKEN: only join tokens admit agents.
const h = useHubHarness({ agentToken: null, armTimeoutMs: 3000 });

beforeAll(async () => {
  await h.db.db.insert(schema.orgs).values({ id: ORG, name: "Tenant" });
});

const disconnected = (a: ScriptedAgent) => new Promise<string>((resolve) => a.socket.once("disconnect", resolve));

describe("agent join tokens at the gateway", () => {
  it("refuses the shared token when the hub has no AGENT_TOKEN, saying what to use", async () => {
    await expect(h.connect({ token: TEST_AGENT_TOKEN })).rejects.toThrow(
      "invalid agent token: this hub knows no such token (mistyped, or created on another Volley install) — use a join token (vat_…) from this install's Agents → Add agent (this hub has no shared AGENT_TOKEN)",
    );
    await expect(h.connect({ token: "vat_made-up" })).rejects.toThrow(/^invalid agent token/);
  });

  it("admits a live join token: the agent joins the token's org and pool, recorded with token_id, and runs that org's shards", async () => {
    const { token, secret } = await createAgentToken(h.db.db, { orgId: ORG, name: "tenant gens", pool: "tenant-pool" });
    // The agent asks for another pool; the token decides.
    const a = await h.connect({ token: secret, name: "tenant-agent", pool: "somewhere-else" });
    const row = (await listAgents(h.db.db, ORG)).find((r) => r.id === a.agentId);
    expect(row).toMatchObject({ orgId: ORG, pool: "tenant-pool", tokenId: token.id, status: "online" });
    expect((await listAgentTokens(h.db.db, ORG))[0]?.lastUsedAt).toBeInstanceOf(Date);
    expect(await a.heartbeat()).toEqual({ ok: true });

    // The default org's run in the same pool name never reaches the tenant's agent.
    const foreign = await h.startRun(testPlan({ agents: { pool: "tenant-pool" }, duration: "1s" }));
    // The tenant's own run does.
    const run = await insertRun(h.db.db, { plan: testPlan({ agents: { pool: "tenant-pool" } }), orgId: ORG });
    const runs = new Queue(QUEUE_NAMES.runs, { connection: h.redis });
    await enqueue(runs, runJob, { runId: run.id });
    await runs.close();
    const job = await a.until((r) => r.assign.find((j) => j.runId === run.id), 5000, "the tenant's shard");
    const start = await a.nextStart();
    await a.sendFrame(testFrame({ runId: run.id, shardId: job.shardId, agentId: a.agentId }, 0, [4], { startedAt: start.startAt }));
    await a.end({ runId: run.id, shardId: job.shardId, status: "completed", frames: 1 });
    const done = await h.waitForFinal(run.id);
    expect(done.status).toBe("passed");
    expect((await listShards(h.db.db, run.id))[0]?.agentId).toBe(a.agentId);
    expect(a.received.assign.some((j) => j.runId === foreign)).toBe(false);
    const foreignRun = await h.waitForFinal(foreign);
    expect(foreignRun.status).toBe("errored");
    expect(foreignRun.reason).toMatch(/^plan asks for 1 agent; pool 'tenant-pool' has 0 connected/);
  });

  it("refuses a revoked token with a clear message", async () => {
    const { token, secret } = await createAgentToken(h.db.db, { orgId: DEFAULT_ORG_ID, name: "old laptop" });
    expect(await revokeAgentToken(h.db.db, DEFAULT_ORG_ID, token.id)).toBe(true);
    await expect(h.connect({ token: secret })).rejects.toThrow(
      `agent token revoked: join token "old laptop" (${token.prefix}…) was revoked; ask an admin of your Volley organization for a new join token and set it as AGENT_TOKEN`,
    );
  });

  it("disconnects a connected agent at its next heartbeat once its token is revoked", async () => {
    const { token, secret } = await createAgentToken(h.db.db, { orgId: DEFAULT_ORG_ID, name: "soon revoked", pool: "revoke" });
    const a = await h.connect({ token: secret, name: "revoked-agent" });
    expect(await a.heartbeat()).toEqual({ ok: true });
    await revokeAgentToken(h.db.db, DEFAULT_ORG_ID, token.id);
    const gone = disconnected(a);
    const ack = await a.heartbeat();
    expect(ack).toMatchObject({ ok: false, error: expect.stringMatching(/^agent token revoked/) });
    expect(await gone).toBe("io server disconnect");
    await expect.poll(async () => (await listAgents(h.db.db)).find((r) => r.id === a.agentId)?.status, { timeout: 3000 }).toBe("offline");
    // An agent that comes back with the same token is refused.
    await expect(h.connect({ token: secret })).rejects.toThrow(/^agent token revoked/);
  });
});

describe("the shared AGENT_TOKEN (self-hosted bootstrap)", () => {
  it("still admits agents into the default org next to join tokens", async () => {
    const other = await startHubHarness({ databaseServerUrl: inject("databaseServerUrl"), redisUrl: inject("redisUrl") });
    try {
      const a = await ScriptedAgent.connect({ hubUrl: other.hubUrl, token: TEST_AGENT_TOKEN, name: "bootstrap", pool: "boot" });
      const { secret } = await createAgentToken(other.db.db, { orgId: DEFAULT_ORG_ID, name: "j", pool: "joined" });
      const b = await ScriptedAgent.connect({ hubUrl: other.hubUrl, token: secret, name: "joined" });
      const rows = await listAgents(other.db.db);
      expect(rows.find((r) => r.id === a.agentId)).toMatchObject({ orgId: DEFAULT_ORG_ID, pool: "boot", tokenId: null });
      expect(rows.find((r) => r.id === b.agentId)).toMatchObject({ pool: "joined" });
      expect(rows.find((r) => r.id === b.agentId)?.tokenId).toMatch(/^atk_/);
      await expect(ScriptedAgent.connect({ hubUrl: other.hubUrl, token: "wrong-token" })).rejects.toThrow(
        "invalid agent token: this hub knows no such token (mistyped, or created on another Volley install) — use a join token (vat_…) from this install's Agents → Add agent, or the hub's AGENT_TOKEN",
      );
      a.close();
      b.close();
    } finally {
      await other.close();
    }
  });
});
