import { count, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createAgentToken, schema } from "@volley/db";
import { useHubHarness } from "../test-support/use-hub-harness";

// Issue 31 #7: pools are bounded per owning account (not only per org), agent rows per token.
const h = useHubHarness({ maxPoolsPerOrg: 10, maxPoolsPerAccount: 4, maxAgentsPerToken: 5, poolReleaseMs: 500 });

/** An org owned by `userId`, with a join token for `pool`. */
async function ownedOrg(orgId: string, userId: string, pools: string[]): Promise<string[]> {
  await h.db.db.insert(schema.orgs).values({ id: orgId, name: orgId }).onConflictDoNothing();
  await h.db.db
    .insert(schema.members)
    .values({ id: `mem_${orgId}`, organizationId: orgId, userId, role: "owner" })
    .onConflictDoNothing();
  const secrets: string[] = [];
  for (const pool of pools) secrets.push((await createAgentToken(h.db.db, { orgId, name: pool, pool })).secret);
  return secrets;
}

describe("agent limits", () => {
  it("caps pools across all orgs one account owns (HUB_MAX_POOLS_PER_ACCOUNT), not per org only", async () => {
    const owner = "usr_many_orgs";
    await h.db.db.insert(schema.users).values({ id: owner, name: "Owner", email: "owner@example.com" }).onConflictDoNothing();
    const [a1, a2] = await ownedOrg("org_acct_1", owner, ["p1", "p2"]);
    const [b1, b2] = await ownedOrg("org_acct_2", owner, ["p1", "p2"]);
    const [c1] = await ownedOrg("org_acct_3", owner, ["p1"]);
    const agents = [];
    for (const token of [a1!, a2!, b1!, b2!]) agents.push(await h.connect({ token, name: "acct-agent" }));
    // Each org holds 2 pools, well inside HUB_MAX_POOLS_PER_ORG=10; the account's fifth is refused.
    await expect(h.connect({ token: c1!, name: "acct-one-too-many" })).rejects.toThrow(
      "pool limit reached: the organizations owned by this organization's owner already have 4 pools on this hub (HUB_MAX_POOLS_PER_ACCOUNT=4; a pool counts until 0.5 s after its last agent left); connect the agent to an existing pool of one of them, or ask the hub's operator to raise HUB_MAX_POOLS_PER_ACCOUNT",
    );
    expect(
      h.hub
        .poolWorkers()
        .filter((p) => p.startsWith("org_acct_"))
        .sort(),
    ).toEqual(["org_acct_1.p1", "org_acct_1.p2", "org_acct_2.p1", "org_acct_2.p2"]);
    // More agents in a pool the account has are admitted; another account's org gets pools of its own.
    agents.push(await h.connect({ token: a1!, name: "acct-agent-2" }));
    await h.db.db.insert(schema.users).values({ id: "usr_other", name: "Other", email: "other@example.com" }).onConflictDoNothing();
    const [other] = await ownedOrg("org_other_acct", "usr_other", ["p1"]);
    agents.push(await h.connect({ token: other!, name: "other-account" }));
    // Once the account's pools are released, its third org may have one.
    for (const a of agents) a.close();
    await expect.poll(() => h.hub.poolWorkers(), { timeout: 5000 }).toEqual([]);
    (await h.connect({ token: c1!, name: "acct-later" })).close();
  });

  it("caps the agents rows one join token can create (HUB_MAX_AGENTS_PER_TOKEN); known agents still reconnect", async () => {
    await h.db.db.insert(schema.orgs).values({ id: "org_rows", name: "Rows" }).onConflictDoNothing();
    const { secret, token } = await createAgentToken(h.db.db, { orgId: "org_rows", name: "many", pool: "rows" });
    // 12 distinct agents at once, as one token opening many sockets: 5 admitted, 7 refused naming the setting and the fix.
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => h.connect({ token: secret, name: `row-${i}`, instanceId: `row-instance-${i}` })),
    );
    const admitted = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === "rejected" ? [(r.reason as Error).message] : []));
    expect(admitted).toHaveLength(5);
    expect(refused).toHaveLength(7);
    for (const message of refused)
      expect(message).toBe(
        "agent limit reached: this join token already has 5 agents registered (HUB_MAX_AGENTS_PER_TOKEN=5), and this one would be another: run agents with a persistent AGENT_STATE_DIR so a restart keeps its identity instead of enrolling anew, remove agents you no longer use (Agents → Remove; offline ones also leave after AGENT_RETENTION_DAYS), or ask the hub's operator to raise HUB_MAX_AGENTS_PER_TOKEN",
      );
    const rows = async () => (await h.db.db.select({ n: count() }).from(schema.agents).where(eq(schema.agents.tokenId, token.id)))[0]?.n;
    expect(await rows()).toBe(5);

    // An admitted agent reconnecting (same instance id) keeps its row and is admitted; a persisted id likewise.
    const first = admitted[0]!;
    const instanceId = results.findIndex((r) => r.status === "fulfilled" && r.value === first);
    first.close();
    const again = await h.connect({ token: secret, name: first.name, instanceId: `row-instance-${instanceId}` });
    expect(again.agentId).toBe(first.agentId);
    await expect(h.connect({ token: secret, name: "row-new", agentKey: "agent-key-new-0001" })).rejects.toThrow("agent limit reached");
    expect(await rows()).toBe(5);
    for (const a of [...admitted, again]) a.close();
  });
});
