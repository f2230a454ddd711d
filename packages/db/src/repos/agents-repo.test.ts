import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { eq } from "drizzle-orm";
import type { AgentHello } from "@volley/contracts";
import { createDb, type DbHandle } from "../client";
import { createTestDatabase } from "../test-database";
import { agents, DEFAULT_ORG_ID, orgs } from "../schema";
import { createAgentToken } from "./agent-tokens-repo";
import { listAgentStatuses, markStaleAgentsOffline, setAgentStatus, upsertAgent } from "./agents-repo";

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
