import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { eq } from "drizzle-orm";
import type { AgentHello, Plan } from "@volley/contracts";
import { createDb, type DbHandle } from "../client";
import { createTestDatabase } from "../test-database";
import { agents, DEFAULT_ORG_ID, orgs, shards } from "../schema";
import { createAgentToken } from "./agent-tokens-repo";
import {
  AgentInstanceConflictError,
  AgentKeyConflictError,
  listAgentStatuses,
  markStaleAgentsOffline,
  removeAgent,
  setAgentStatus,
  upsertAgent,
} from "./agents-repo";
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
    await h.db
      .update(agents)
      .set({ status: "busy", lastSeenAt: ago(60_000) })
      .where(eq(agents.id, stale.id));
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
    await h.db
      .update(agents)
      .set({ status: "online", lastSeenAt: ago(120_000) })
      .where(eq(agents.id, crashed.id));
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

describe("instance ids belong to their org", () => {
  const as = (name: string, instanceId: string, agentKey?: string): AgentHello => ({ ...hello(name), instanceId, ...(agentKey ? { agentKey } : {}) });
  const byId = async (id: string) => (await h.db.select().from(agents).where(eq(agents.id, id)))[0];

  it("another org's agent reusing an instance id gets its own row; the original row keeps its org, token and name", async () => {
    const { token } = await createAgentToken(h.db, { orgId: "org_b", name: "victim's token" });
    const victim = await upsertAgent(h.db, as("victim", "inst-shared-1"), { orgId: "org_b", tokenId: token.id });
    const intruder = await upsertAgent(h.db, as("intruder", "inst-shared-1"), { orgId: DEFAULT_ORG_ID });
    expect(intruder.id).not.toBe(victim.id);
    expect(intruder).toMatchObject({ orgId: DEFAULT_ORG_ID, instanceId: "inst-shared-1", name: "intruder" });
    expect(await byId(victim.id)).toMatchObject({ orgId: "org_b", tokenId: token.id, name: "victim", instanceId: "inst-shared-1" });
  });

  it("a persisted-id agent of another org reusing an instance id gets its own row", async () => {
    const victim = await upsertAgent(h.db, as("victim-k", "inst-shared-2", "key-victim-2"), { orgId: "org_b" });
    const intruder = await upsertAgent(h.db, as("intruder-k", "inst-shared-2", "key-intruder-2"), { orgId: DEFAULT_ORG_ID });
    expect(intruder.id).not.toBe(victim.id);
    expect(await byId(victim.id)).toMatchObject({ orgId: "org_b", agentKey: "key-victim-2", name: "victim-k" });
  });

  it("in the same org, an instance id is taken back only with the row's token (no persisted id) or its persisted id", async () => {
    const { token } = await createAgentToken(h.db, { orgId: "org_b", name: "owner's token" });
    const { token: other } = await createAgentToken(h.db, { orgId: "org_b", name: "another token" });
    const owner = await upsertAgent(h.db, as("owner", "inst-same-org-1"), { orgId: "org_b", tokenId: token.id });
    await setAgentStatus(h.db, owner.id, "offline");
    // The same process reconnecting (same token): its row.
    expect((await upsertAgent(h.db, as("owner", "inst-same-org-1"), { orgId: "org_b", tokenId: token.id })).id).toBe(owner.id);
    for (const [intruder, tokenId] of [
      [as("by-token", "inst-same-org-1"), other.id],
      [as("by-bootstrap", "inst-same-org-1"), null],
      [as("by-key", "inst-same-org-1", "key-same-org-x"), token.id],
    ] as const) {
      const err = await upsertAgent(h.db, intruder, { orgId: "org_b", tokenId }).catch((e: unknown) => e);
      expect(err, intruder.name).toBeInstanceOf(AgentInstanceConflictError);
      expect(err).toMatchObject({ instanceId: "inst-same-org-1", orgId: "org_b" });
    }
    expect(await byId(owner.id)).toMatchObject({ orgId: "org_b", tokenId: token.id, name: "owner", agentKey: null });

    // A row with a persisted id is only ever matched by it: not by its instance id and token alone.
    const keyed = await upsertAgent(h.db, as("keyed-owner", "inst-same-org-2", "key-same-org-2"), { orgId: "org_b", tokenId: token.id });
    const err = await upsertAgent(h.db, as("no-key", "inst-same-org-2"), { orgId: "org_b", tokenId: token.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentInstanceConflictError);
    expect(await byId(keyed.id)).toMatchObject({ name: "keyed-owner", agentKey: "key-same-org-2" });
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
    await h.db
      .update(agents)
      .set({ lastSeenAt: ago(120_000) })
      .where(eq(agents.id, online.id));
    expect(await removeAgent(h.db, "org_b", online.id, { offlineAfterMs: 30_000 })).toEqual({ status: "removed" });

    const busy = await upsertAgent(h.db, hello("rm-busy"), { orgId: "org_b" });
    const run = await insertRun(h.db, { plan, orgId: "org_b" });
    const [shard] = await insertShards(h.db, run.id, [plan]);
    await updateShard(h.db, shard!.id, { agentId: busy.id, status: "assigned" });
    await updateShard(h.db, shard!.id, { status: "running" });
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
