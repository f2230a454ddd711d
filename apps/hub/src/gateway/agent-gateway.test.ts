import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { REDIS_KEYS } from "@volley/contracts";
import { getRun, insertRun, insertShards, listAgents } from "@volley/db";
import { ScriptedAgent } from "../test-support/scripted-agent";
import { startHubHarness, TEST_AGENT_TOKEN, type HubHarness } from "../test-support/hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";

let h: HubHarness;

beforeAll(async () => {
  h = await startHubHarness({ databaseServerUrl: inject("databaseServerUrl"), redisUrl: inject("redisUrl"), redisDb: 6 });
});
afterAll(async () => {
  await h?.close();
});

describe("agent gateway", () => {
  it("rejects an invalid agent token with a clear message", async () => {
    await expect(ScriptedAgent.connect({ hubUrl: h.hubUrl, token: "not-the-token" })).rejects.toThrow("invalid agent token");
  });

  it("rejects a malformed hello, naming the field", async () => {
    const { io } = await import("socket.io-client");
    const socket = io(`${h.hubUrl}/agent`, { auth: { token: TEST_AGENT_TOKEN, instanceId: "x" }, transports: ["websocket"], reconnection: false });
    const err = await new Promise<Error>((resolve) => socket.once("connect_error", resolve));
    socket.close();
    expect(err.message).toMatch(/^invalid agent hello: .*name/);
  });

  it("welcomes an agent, registers it online, answers clock pings, and marks it offline when it leaves", async () => {
    const a = await ScriptedAgent.connect({ hubUrl: h.hubUrl, token: TEST_AGENT_TOKEN, name: "gw-agent" });
    expect(a.agentId).toMatch(/^agt_/);
    const before = Date.now();
    const { hubTime } = await a.clockPing();
    expect(hubTime).toBeGreaterThanOrEqual(before);
    expect(hubTime).toBeLessThanOrEqual(Date.now());
    const row = (await listAgents(h.db.db)).find((r) => r.id === a.agentId);
    expect(row?.status).toBe("online");
    a.close();
    await expect.poll(async () => (await listAgents(h.db.db)).find((r) => r.id === a.agentId)?.status, { timeout: 3000 }).toBe("offline");
  });

  it("answers an invalid frame with ok:false and stays up; stores a valid one in the run's stream", async () => {
    const a = await ScriptedAgent.connect({ hubUrl: h.hubUrl, token: TEST_AGENT_TOKEN, name: "gw-frames" });
    const bad = await a.sendFrame({ runId: "run_x", seq: -1 });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatch(/^invalid frame: .*seq/);
    expect(await a.sendFrame("not even an object" as unknown as Record<string, unknown>)).toMatchObject({ ok: false });
    // Still connected and serving after bad input.
    expect((await a.clockPing()).hubTime).toBeGreaterThan(0);

    const run = await insertRun(h.db.db, { plan: testPlan() });
    const [shard] = await insertShards(h.db.db, run.id, [testPlan()]);
    expect(await a.sendFrame(testFrame({ runId: run.id, shardId: shard!.id, agentId: a.agentId }, 0, [5]))).toEqual({ ok: true });
    expect(await h.redis.xlen(REDIS_KEYS.frames(run.id))).toBe(1);
    expect(await h.redis.sismember(REDIS_KEYS.activeRuns, run.id)).toBe(1);
    expect(await a.end({ runId: run.id, shardId: shard!.id, status: "completed", frames: 1 })).toMatchObject({ ok: false });
    a.close();
  });

  it("shuts down without losing a running run: aborts it after the grace period and records why", async () => {
    const a = await ScriptedAgent.connect({ hubUrl: h.hubUrl, token: TEST_AGENT_TOKEN, name: "gw-shutdown", pool: "shutdown" });
    const runId = await h.startRun(testPlan({ agents: { pool: "shutdown" }, duration: "60s" }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    await a.nextStart();
    await a.sendFrame(testFrame({ runId, shardId: job.shardId, agentId: a.agentId }, 0, [5]));
    // The agent ends its shard when told to abort, like the real one.
    a.socket.on("shard.abort", () => void a.end({ runId, shardId: job.shardId, status: "aborted", frames: 1 }));
    await h.hub.close();
    const run = await getRun(h.db.db, runId);
    expect(run).toMatchObject({ status: "aborted", reason: "hub shutting down" });
    expect(run?.summary?.messages.sent).toBe(1);
    a.close();
  });
});
