import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { eq } from "drizzle-orm";
import type { AgentHello, Plan } from "@volley/contracts";
import { createDb, type DbHandle } from "../client";
import { createTestDatabase } from "../test-database";
import { agents, DEFAULT_ORG_ID, orgs, shards } from "../schema";
import { createAgentToken } from "./agent-tokens-repo";
import { AgentKeyConflictError, listAgentStatuses, markStaleAgentsOffline, removeAgent, setAgentStatus, upsertAgent } from "./agents-repo";
import { insertRun } from "./runs-repo";
import { insertShards, updateShard } from "./shards-repo";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;

beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  h = createDb(testDb.url);
  await h.db.insert(orgs).values({ id: "org_b", name: "B" });
});
afterAll(async () => {
  await h?.close();
  await testDb?.drop();
});

const hello = (name: string, pool = "default"): AgentHello => ({
  token: "x",
  instanceId: `${name}-instance`,
  name,
  version: "1.2.3",
  pool,
  labels: { zone: "a" },
  capacity: { cores: 4, memoryMb: 8192, maxConnections: 50_000, sourceAddresses: [] },
});
const ago = (ms: number) => new Date(Date.now() - ms);

describe("agent list", () => {
  it("lists an org's agents with online / busy / offline and capacity, offline when silent past the timeout", async () => {
    const { token } = await createAgentToken(h.db, { orgId: "org_b", name: "t", pool: "eu" });
    const online = await upsertAgent(h.db, hello("a-online", "eu"), { orgId: "org_b", tokenId: token.id });
    const busy = await upsertAgent(h.db, hello("b-busy", "eu"), { orgId: "org_b", tokenId: token.id });
    await setAgentStatus(h.db, busy.id, "busy");
    const gone = await upsertAgent(h.db, hello("c-gone"), { orgId: "org_b" });
    await setAgentStatus(h.db, gone.id, "offline");
    // Left "busy" by a hub that crashed: last heard of a minute ago.
    const stale = await upsertAgent(h.db, hello("d-stale"), { orgId: "org_b" });
    await h.db.update(agents).set({ status: "busy", lastSeenAt: ago(60_000) }).where(eq(agents.id, stale.id));
    await upsertAgent(h.db, hello("elsewhere"), { orgId: DEFAULT_ORG_ID });

    const list = await listAgentStatuses(h.db, "org_b", { offlineAfterMs: 30_000 });
    expect(list.map((a) => [a.name, a.status])).toEqual([
      ["a-online", "online"],
      ["b-busy", "busy"],
      ["c-gone", "offline"],
      ["d-stale", "offline"],
    ]);
    expect(list[0]).toMatchObject({ id: online.id, pool: "eu", tokenId: token.id, version: "1.2.3", capacity: { cores: 4, maxConnections: 50_000 } });
    expect(list[2]?.tokenId).toBeNull();
    expect(typeof list[0]?.lastSeenAt).toBe("string");
  });

  it("marks only stale agents offline at hub start (agents of live replicas keep their status)", async () => {
    const fresh = await upsertAgent(h.db, hello("fresh"), { orgId: DEFAULT_ORG_ID });
    const crashed = await upsertAgent(h.db, hello("crashed"), { orgId: DEFAULT_ORG_ID });
    await h.db.update(agents).set({ status: "online", lastSeenAt: ago(120_000) }).where(eq(agents.id, crashed.id));
    expect(await markStaleAgentsOffline(h.db, 30_000)).toBeGreaterThanOrEqual(1);
    const rows = await h.db.select().from(agents).where(eq(agents.orgId, DEFAULT_ORG_ID));
    expect(rows.find((r) => r.id === crashed.id)?.status).toBe("offline");
    expect(rows.find((r) => r.id === fresh.id)?.status).toBe("online");
  });
});

describe("agent identity", () => {
  const restartOf = (agentKey: string, instanceId: string, name = "keyed"): AgentHello => ({ ...hello(name), agentKey, instanceId });

  it("keeps one row per persisted id across restarts (new instanceId each time) within its org", async () => {
    const first = await upsertAgent(h.db, restartOf("key-restart-1", "proc-1"), { orgId: "org_b" });
    await setAgentStatus(h.db, first.id, "offline");
    const second = await upsertAgent(h.db, restartOf("key-restart-1", "proc-2", "renamed"), { orgId: "org_b" });
    const third = await upsertAgent(h.db, restartOf("key-restart-1", "proc-3", "renamed"), { orgId: "org_b" });
    expect([second.id, third.id]).toEqual([first.id, first.id]);
    const rows = await h.db.select().from(agents).where(eq(agents.agentKey, "key-restart-1"));
    expect(rows).toMatchObject([{ id: first.id, orgId: "org_b", instanceId: "proc-3", name: "renamed", status: "online" }]);
  });

  it("refuses a persisted id registered in another org, leaving that row untouched", async () => {
    const mine = await upsertAgent(h.db, restartOf("key-cross-1", "c-1"), { orgId: "org_b" });
    const err = await upsertAgent(h.db, restartOf("key-cross-1", "c-2", "intruder"), { orgId: DEFAULT_ORG_ID }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentKeyConflictError);
    expect(err).toMatchObject({ agentKey: "key-cross-1", ownerOrgId: "org_b" });
    const rows = await h.db.select().from(agents).where(eq(agents.agentKey, "key-cross-1"));
    expect(rows).toMatchObject([{ id: mine.id, orgId: "org_b", instanceId: "c-1", name: "keyed" }]);
  });
});

describe("removeAgent", () => {
  const plan = {
    name: "t",
    target: { url: "ws://127.0.0.1:1/echo", protocol: "ws", connectTimeout: "10s" },
    connections: { count: 1, rate: 1 },
    scenario: { kind: "echo", message: { bytes: 64, rate: 1, per: "connection", arrival: "constant", timeout: "10s" }, duration: "1s", warmup: 0 },
    thresholds: [],
    agents: { pool: "default", count: 1 },
  } as unknown as Plan;

  it("removes an offline agent of the org; refuses online and busy ones; another org's agent is not found", async () => {
    const offline = await upsertAgent(h.db, { ...hello("rm-offline"), agentKey: "key-rm-offline" }, { orgId: "org_b" });
    await setAgentStatus(h.db, offline.id, "offline");
    expect(await removeAgent(h.db, DEFAULT_ORG_ID, offline.id)).toEqual({ status: "not_found" });
    expect(await removeAgent(h.db, "org_b", offline.id)).toEqual({ status: "removed" });
    expect(await removeAgent(h.db, "org_b", offline.id)).toEqual({ status: "not_found" });
    // The same agent connecting again enrolls as new.
    const back = await upsertAgent(h.db, { ...hello("rm-offline"), agentKey: "key-rm-offline" }, { orgId: "org_b" });
    expect(back.id).not.toBe(offline.id);

    const online = await upsertAgent(h.db, hello("rm-online"), { orgId: "org_b" });
    expect(await removeAgent(h.db, "org_b", online.id)).toEqual({ status: "online" });
    // A hub that died left it "online": silent past the timeout, it is offline and removable.
    await h.db.update(agents).set({ lastSeenAt: ago(120_000) }).where(eq(agents.id, online.id));
    expect(await removeAgent(h.db, "org_b", online.id, { offlineAfterMs: 30_000 })).toEqual({ status: "removed" });

    const busy = await upsertAgent(h.db, hello("rm-busy"), { orgId: "org_b" });
    const run = await insertRun(h.db, { plan, orgId: "org_b" });
    const [shard] = await insertShards(h.db, run.id, [plan]);
    await updateShard(h.db, shard!.id, { agentId: busy.id, status: "running" });
    // Even offline by its row (its hub lost it), a running shard keeps the row: the run still reports it.
    await setAgentStatus(h.db, busy.id, "offline");
    expect(await removeAgent(h.db, "org_b", busy.id)).toEqual({ status: "busy", runId: run.id });
    await updateShard(h.db, shard!.id, { status: "completed" });
    expect(await removeAgent(h.db, "org_b", busy.id)).toEqual({ status: "removed" });
    // The run keeps its shard; the shard no longer names the removed agent.
    const [kept] = await h.db.select().from(shards).where(eq(shards.id, shard!.id));
    expect(kept).toMatchObject({ status: "completed", agentId: null });
  });
});
