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
const h = useHubHarness(8);
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

describe("the real agent process", () => {
  it("killed with SIGKILL and started again, is still one agent: same row, its persisted id in AGENT_STATE_DIR", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "volley-agent-restart-"));
    const env = { ...process.env, HUB_URL: h.hubUrl, AGENT_TOKEN: TEST_AGENT_TOKEN, AGENT_NAME: "restarted-agent", AGENT_STATE_DIR: path.join(dir, "state"), LOG_LEVEL: "info" };
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
