import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { pino } from "pino";
import { planSchema, planTiming } from "@volley/contracts";
import { listFrames, listShards } from "@volley/db";
import { buildAgentHello, HubClient } from "@volley/agent";
import { startWsEchoServer } from "@volley/targets";
import { startHubHarness, TEST_AGENT_TOKEN, type HubHarness } from "../../apps/hub/src/test-support/hub-harness";

/**
 * A plan whose connection stages last far longer than ramp + duration, through an in-process hub
 * and a real agent (HubClient and its engine) against the ws echo target. The hub's deadlines come
 * from the same plan-timing the engine follows; with a deadline from ramp + duration (the stages
 * ignored) plus the margin, the run was stopped as "shard did not end".
 */
const SLACK_MS = 1000;

let harness: HubHarness;
let target: Awaited<ReturnType<typeof startWsEchoServer>>;
let agent: HubClient;

beforeAll(async () => {
  target = await startWsEchoServer({ port: 0 });
  harness = await startHubHarness({
    databaseServerUrl: inject("databaseServerUrl"),
    redisUrl: inject("redisUrl"),
    hub: { endSlackMs: SLACK_MS, armTimeoutMs: 10_000, storeWaitMs: 3000 },
  });
  agent = new HubClient({
    hubUrl: harness.hubUrl,
    hello: buildAgentHello({ token: TEST_AGENT_TOKEN, name: "long-stages-agent", pool: "stages", maxConnections: 100 }),
    log: pino({ level: "silent" }),
    heartbeatMs: 500,
  });
  let connected = false;
  agent.start();
  const deadline = Date.now() + 10_000;
  while (!(connected ||= agent.connected) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  if (!connected) throw new Error("the agent did not connect to the hub");
});
afterAll(async () => {
  await agent?.stop(2000);
  await harness?.close();
  await target?.close();
});

describe("a plan whose stages outlast ramp + duration", () => {
  it("runs to its own end through hub and agent, every stage measured, instead of being stopped as overdue", async () => {
    const plan = planSchema.parse({
      name: "long stages",
      target: { url: target.url, connectTimeout: "1s" },
      connections: {
        count: 4,
        stages: [
          { duration: "2s", target: 4 },
          { duration: "3s", target: 4 },
          { duration: "1s", target: 0 },
        ],
      },
      scenario: { kind: "echo", duration: "1s", message: { rate: 5, timeout: "1s" } },
      agents: { pool: "stages", count: 1 },
    });
    const timing = planTiming(plan);
    // The stages (6 s) outlast what a deadline from ramp + duration + waits + the margin allowed.
    const rampPlusDuration = (1000 * plan.connections.count) / plan.connections.rate + timing.durationMs + timing.drainMs + timing.openWithinMs + SLACK_MS;
    expect(timing.sendEndMs).toBeGreaterThan(rampPlusDuration + 1500);

    target.resetHoldStats();
    const runId = await harness.startRun(plan);
    const run = await harness.waitForFinal(runId, 30_000);
    expect(run.reason).toBeNull();
    expect(run.status).toBe("passed");
    const [shard] = await listShards(harness.db.db, runId);
    expect(shard).toMatchObject({ status: "completed", error: null });

    const frames = await listFrames(harness.db.db, runId);
    // One frame a second through the stages, the last stage included.
    expect(frames.length).toBeGreaterThanOrEqual(6);
    expect(new Set(frames.map((f) => f.stage).filter((s) => s !== null))).toEqual(new Set([0, 1, 2]));
    const sent = run.summary!.messages.sent;
    // Four connections, each sending 5/s for its 1 s window: 20 messages, every one echoed by the server.
    expect(sent).toBe(20);
    expect(run.summary!.messages.received).toBe(sent);
    expect(target.holdStats().count).toBe(sent);
  });
});
