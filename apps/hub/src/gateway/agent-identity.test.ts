import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { startApp } from "@volley/devstack";
import { createAgentToken, DEFAULT_ORG_ID, removeAgent, schema } from "@volley/db";
import { TEST_AGENT_TOKEN } from "../test-support/hub-harness";
import type { ScriptedAgent } from "../test-support/scripted-agent";
import { useHubHarness } from "../test-support/use-hub-harness";

// An agent keeps one row across restarts: it sends the id persisted in its state file (agentKey),
// each process with a new instanceId. Real hub, real sockets, real PostgreSQL.
const h = useHubHarness();
const OTHER_ORG = "org_identity_other";

beforeAll(async () => {
  await h.db.db.insert(schema.orgs).values({ id: OTHER_ORG, name: "Other" });
});

const rowsOf = (agentKey: string) => h.db.db.select().from(schema.agents).where(eq(schema.agents.agentKey, agentKey));
const disconnected = (a: ScriptedAgent) => new Promise<string>((resolve) => a.socket.once("disconnect", resolve));

describe("agent identity at the gateway", () => {
  it("gives a restarted agent (same persisted id, new process) its row back: one row, online, the new process's instance", async () => {
    const agentKey = "agent-restart-0001";
    const first = await h.connect({ name: "laptop", agentKey, instanceId: "proc-1" });
    first.close();
    await expect.poll(async () => (await rowsOf(agentKey))[0]?.status, { timeout: 3000 }).toBe("offline");

    const second = await h.connect({ name: "laptop", agentKey, instanceId: "proc-2" });
    expect(second.agentId).toBe(first.agentId);
    expect(await rowsOf(agentKey)).toMatchObject([{ id: first.agentId, instanceId: "proc-2", status: "online", orgId: DEFAULT_ORG_ID }]);

    // Killed outright and back before the hub saw the old socket drop: the old connection is
    // dropped and its session can no longer mark the row offline.
    const dropped = disconnected(second);
    const third = await h.connect({ name: "laptop", agentKey, instanceId: "proc-3" });
    expect(third.agentId).toBe(first.agentId);
    expect(await dropped).toBe("io server disconnect");
    await new Promise((r) => setTimeout(r, 500));
    expect(await rowsOf(agentKey)).toMatchObject([{ id: first.agentId, instanceId: "proc-3", status: "online" }]);
    expect((await third.clockPing()).hubTime).toBeGreaterThan(0);
    third.close();
  });

  it("without a persisted id (older agents) each process is its own row, as before", async () => {
    const a = await h.connect({ name: "old-agent", instanceId: "old-1" });
    a.close();
    const b = await h.connect({ name: "old-agent", instanceId: "old-2" });
    expect(b.agentId).not.toBe(a.agentId);
    b.close();
  });

  it("refuses an agent whose persisted id names another org's row, and leaves that row alone", async () => {
    const agentKey = "agent-cross-org-0001";
    const mine = await h.connect({ name: "default-org-agent", agentKey, instanceId: "cross-1" });
    mine.close();
    const { secret } = await createAgentToken(h.db.db, { orgId: OTHER_ORG, name: "other org's token" });
    await expect(h.connect({ token: secret, name: "intruder", agentKey, instanceId: "cross-2" })).rejects.toThrow(
      /^agent id taken: this agent's persisted id \(agent-cross-org-0001\) belongs to an agent of another Volley organization than its token's; remove that agent there \(Agents → Remove\)/,
    );
    expect(await rowsOf(agentKey)).toMatchObject([{ id: mine.agentId, orgId: DEFAULT_ORG_ID, name: "default-org-agent", instanceId: "cross-1" }]);

    // Once removed from the default org, the same agent enrolls with the other org's token as a new agent there.
    await expect.poll(async () => (await rowsOf(agentKey))[0]?.status, { timeout: 3000 }).toBe("offline");
    expect(await removeAgent(h.db.db, DEFAULT_ORG_ID, mine.agentId)).toEqual({ status: "removed" });
    const moved = await h.connect({ token: secret, name: "moved", agentKey, instanceId: "cross-3" });
    expect(moved.agentId).not.toBe(mine.agentId);
    expect(await rowsOf(agentKey)).toMatchObject([{ id: moved.agentId, orgId: OTHER_ORG, status: "online" }]);
    moved.close();
  });
});

// An agent prints its instanceId at startup: whoever reads it must not take over its row or its
// live session, from another org (a row of its own) or from the same org with another token or
// persisted id (refused).
describe("instance ids at the gateway", () => {
  const rowsWithInstance = (instanceId: string) =>
    h.db.db.select().from(schema.agents).where(eq(schema.agents.instanceId, instanceId)).orderBy(schema.agents.createdAt);
  const watchDrop = (a: ScriptedAgent) => {
    const seen = { reason: null as string | null };
    a.socket.once("disconnect", (reason) => (seen.reason = reason));
    return seen;
  };

  it("another org's agent reusing a connected agent's instanceId gets its own row; the original row, org and session are untouched", async () => {
    const { secret } = await createAgentToken(h.db.db, { orgId: OTHER_ORG, name: "intruder's token" });
    for (const [instanceId, victimKey, intruderKey] of [
      ["printed-instance-1", undefined, undefined],
      ["printed-instance-2", "victim-key-2", "intruder-key-2"],
    ] as const) {
      const victim = await h.connect({ name: "victim", instanceId, agentKey: victimKey });
      const drop = watchDrop(victim);
      const intruder = await h.connect({ token: secret, name: "intruder", instanceId, agentKey: intruderKey });
      expect(intruder.agentId, instanceId).not.toBe(victim.agentId);
      expect(await rowsWithInstance(instanceId)).toMatchObject([
        { id: victim.agentId, orgId: DEFAULT_ORG_ID, name: "victim", tokenId: null, status: "online" },
        { id: intruder.agentId, orgId: OTHER_ORG, name: "intruder", status: "online" },
      ]);
      // The victim's connection is still its own: not replaced, still answered.
      expect((await victim.clockPing()).hubTime).toBeGreaterThan(0);
      expect((await intruder.clockPing()).hubTime).toBeGreaterThan(0);
      expect(drop.reason).toBeNull();
      // The intruder leaving marks only its own row offline.
      intruder.close();
      await expect.poll(async () => (await rowsWithInstance(instanceId)).map((r) => r.status), { timeout: 3000 }).toEqual(["online", "offline"]);
      expect(victim.socket.connected).toBe(true);
      victim.close();
    }
  });

  it("in the same org, a connection with the instanceId of a connected agent but another token or persisted id is refused; the agent keeps its session", async () => {
    const { secret } = await createAgentToken(h.db.db, { orgId: DEFAULT_ORG_ID, name: "another default-org token" });
    const victim = await h.connect({ name: "victim", instanceId: "printed-instance-3" });
    const keyedVictim = await h.connect({ name: "keyed-victim", instanceId: "printed-instance-4", agentKey: "victim-key-4" });
    const drops = [watchDrop(victim), watchDrop(keyedVictim)];
    const taken = /^agent instance id taken: instanceId printed-instance-[34] belongs to another agent of this Volley organization/;
    // Another token; the same token with a persisted id the row does not have; the keyed row without its key.
    await expect(h.connect({ token: secret, name: "intruder", instanceId: "printed-instance-3" })).rejects.toThrow(taken);
    await expect(h.connect({ name: "intruder", instanceId: "printed-instance-3", agentKey: "intruder-key-3" })).rejects.toThrow(taken);
    await expect(h.connect({ name: "intruder", instanceId: "printed-instance-4" })).rejects.toThrow(taken);
    await expect(h.connect({ token: secret, name: "intruder", instanceId: "printed-instance-4", agentKey: "intruder-key-4" })).rejects.toThrow(taken);

    expect(await rowsWithInstance("printed-instance-3")).toMatchObject([
      { id: victim.agentId, name: "victim", tokenId: null, agentKey: null, status: "online" },
    ]);
    expect(await rowsWithInstance("printed-instance-4")).toMatchObject([
      { id: keyedVictim.agentId, name: "keyed-victim", agentKey: "victim-key-4", status: "online" },
    ]);
    expect((await victim.clockPing()).hubTime).toBeGreaterThan(0);
    expect((await keyedVictim.clockPing()).hubTime).toBeGreaterThan(0);
    expect(drops.map((d) => d.reason)).toEqual([null, null]);

    // The same process reconnecting (same token, same instanceId) still resumes its row and session.
    const again = await h.connect({ name: "victim", instanceId: "printed-instance-3" });
    expect(again.agentId).toBe(victim.agentId);
    await expect.poll(() => drops[0]!.reason, { timeout: 3000 }).toBe("io server disconnect");
    again.close();
    keyedVictim.close();
  });
});

describe("the real agent process", () => {
  it("killed with SIGKILL and started again, is still one agent: same row, its persisted id in AGENT_STATE_DIR", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "volley-agent-restart-"));
    const env = {
      ...process.env,
      HUB_URL: h.hubUrl,
      AGENT_TOKEN: TEST_AGENT_TOKEN,
      AGENT_NAME: "restarted-agent",
      AGENT_STATE_DIR: path.join(dir, "state"),
      LOG_LEVEL: "info",
    };
    const named = () => h.db.db.select().from(schema.agents).where(eq(schema.agents.name, "restarted-agent"));
    try {
      const first = startApp("agent", env);
      await first.waitFor(/connected to/, 30_000);
      const [row] = await named();
      expect(row?.agentKey).toMatch(/^agent-/);
      first.child.kill("SIGKILL");
      await first.exited;

      const second = startApp("agent", env);
      await second.waitFor(/connected to/, 30_000);
      const rows = await named();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ id: row!.id, agentKey: row!.agentKey, status: "online" });
      expect(rows[0]!.instanceId).not.toBe(row!.instanceId);
      await second.stop(10_000);
      await expect.poll(async () => (await named()).map((r) => r.status), { timeout: 5000 }).toEqual(["offline"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
