import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { eq } from "drizzle-orm";
import { createDb, type DbHandle } from "../client";
import { createTestDatabase } from "../test-database";
import { agentTokens, DEFAULT_ORG_ID, orgs } from "../schema";
import { createAgentToken, hashAgentToken, listAgentTokens, revokeAgentToken, touchAgentToken, verifyAgentToken } from "./agent-tokens-repo";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;

beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  h = createDb(testDb.url);
  await h.db.insert(orgs).values({ id: "org_other", name: "Other" });
});
afterAll(async () => {
  await h?.close();
  await testDb?.drop();
});

describe("agent join tokens", () => {
  it("creates a vat_ secret shown once and stores only its SHA-256", async () => {
    const { token, secret } = await createAgentToken(h.db, { orgId: DEFAULT_ORG_ID, name: "eu", pool: "eu-west", createdBy: "usr_1" });
    expect(secret).toMatch(/^vat_[A-Za-z0-9_-]{32}$/);
    expect(token).toMatchObject({
      orgId: DEFAULT_ORG_ID,
      name: "eu",
      pool: "eu-west",
      prefix: secret.slice(0, 10),
      createdBy: "usr_1",
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(token).not.toHaveProperty("tokenHash");
    const [row] = await h.db.select().from(agentTokens).where(eq(agentTokens.id, token.id));
    expect(row?.tokenHash).toBe(hashAgentToken(secret));
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it("defaults the pool and refuses an invalid one, naming it", async () => {
    expect((await createAgentToken(h.db, { orgId: DEFAULT_ORG_ID, name: "d" })).token.pool).toBe("default");
    await expect(createAgentToken(h.db, { orgId: DEFAULT_ORG_ID, name: "bad", pool: "EU West" })).rejects.toThrow(/^pool 'EU West': use lowercase letters/);
  });

  it("verifies a live secret and bumps last_used_at; tells revoked from unknown", async () => {
    const { token, secret } = await createAgentToken(h.db, { orgId: DEFAULT_ORG_ID, name: "v" });
    const live = await verifyAgentToken(h.db, secret);
    expect(live.status).toBe("live");
    if (live.status === "live") {
      expect(live.token.id).toBe(token.id);
      expect(live.token.lastUsedAt).toBeInstanceOf(Date);
    }
    expect(await verifyAgentToken(h.db, "vat_not-a-real-secret")).toEqual({ status: "unknown" });
    // Heartbeats touch last_used_at at most once a minute.
    const old = new Date(Date.now() - 120_000);
    await h.db.update(agentTokens).set({ lastUsedAt: old }).where(eq(agentTokens.id, token.id));
    expect(await touchAgentToken(h.db, token.id)).toBe(true);
    const [touched] = await h.db.select().from(agentTokens).where(eq(agentTokens.id, token.id));
    expect(touched!.lastUsedAt!.getTime()).toBeGreaterThan(old.getTime() + 60_000);
    expect(await touchAgentToken(h.db, "atk_missing")).toBe(false);

    expect(await revokeAgentToken(h.db, DEFAULT_ORG_ID, token.id)).toBe(true);
    expect(await revokeAgentToken(h.db, DEFAULT_ORG_ID, token.id)).toBe(false); // already revoked
    const revoked = await verifyAgentToken(h.db, secret);
    expect(revoked.status).toBe("revoked");
    expect(await touchAgentToken(h.db, token.id)).toBe(false);
  });

  it("lists and revokes only within the org", async () => {
    const mine = await createAgentToken(h.db, { orgId: "org_other", name: "other-1" });
    expect(await revokeAgentToken(h.db, DEFAULT_ORG_ID, mine.token.id)).toBe(false);
    const list = await listAgentTokens(h.db, "org_other");
    expect(list.map((t) => t.name)).toEqual(["other-1"]);
    expect(list[0]).not.toHaveProperty("tokenHash");
    expect((await listAgentTokens(h.db, DEFAULT_ORG_ID)).some((t) => t.name === "other-1")).toBe(false);
    expect(await revokeAgentToken(h.db, "org_other", mine.token.id)).toBe(true);
    expect((await listAgentTokens(h.db, "org_other"))[0]?.revokedAt).toBeInstanceOf(Date);
  });
});
