import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { createDb, type DbHandle } from "../client";
import { createTestDatabase } from "../test-database";
import { insertRun, finishRun, getRun, markRunRunning } from "./runs-repo";
import { insertShards } from "./shards-repo";
import { insertFrames, listFrames } from "./intervals-repo";

const SERVER = inject("databaseServerUrl");
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;

beforeAll(async () => {
  testDb = await createTestDatabase(SERVER);
  h = createDb(testDb.url);
});
afterAll(async () => {
  await h?.close();
  await testDb?.drop();
});

const plan = {
  name: "t",
  target: { url: "ws://127.0.0.1:1/echo", protocol: "ws" as const, connectTimeout: "10s" },
  connections: { count: 1, rate: 1 },
  scenario: {
    kind: "echo" as const,
    message: { bytes: 64, rate: 1, per: "connection" as const, arrival: "constant" as const, timeout: "10s" },
    duration: "1s",
    warmup: 0,
  },
  thresholds: [],
  agents: { pool: "default", count: 1 },
};
const health = { cpu: 1, eventLoopDelayMs: { p50: 1, max: 1 }, rssMb: 1, sendLagMaxMs: 0, saturated: false };

describe("runs and intervals", () => {
  it("stores a frame delivered twice once", async () => {
    const run = await insertRun(h.db, { plan });
    const [shard] = await insertShards(h.db, run.id, [plan]);
    const frame = {
      runId: run.id,
      shardId: shard!.id,
      agentId: "agt_x",
      seq: 0,
      index: 0,
      startedAt: 1,
      durationMs: 1000,
      warmup: false,
      counters: { "messages.sent": 3 },
      histograms: {},
      health,
    };
    expect(await insertFrames(h.db, [frame])).toBe(1);
    expect(await insertFrames(h.db, [frame, { ...frame, seq: 1, index: 1 }])).toBe(1);
    expect((await listFrames(h.db, run.id)).map((f) => f.seq)).toEqual([0, 1]);
  });

  it("keeps a frame's stage, sweep step and sending time (summaries of stages and sweeps need them)", async () => {
    const run = await insertRun(h.db, { plan });
    const [shard] = await insertShards(h.db, run.id, [plan]);
    const base = {
      runId: run.id,
      shardId: shard!.id,
      agentId: "agt_x",
      index: 0,
      startedAt: 1,
      durationMs: 1000,
      warmup: false,
      counters: {},
      histograms: {},
      health,
    };
    await insertFrames(h.db, [
      { ...base, seq: 0, stage: 2, activeMs: 250.5, step: { index: 3, rate: 40, per: "aggregate" as const, failed: true } },
      { ...base, seq: 1, index: 1 },
    ]);
    const [a, b] = await listFrames(h.db, run.id);
    expect(a).toMatchObject({ stage: 2, activeMs: 250.5, step: { index: 3, rate: 40, per: "aggregate", failed: true } });
    expect(b).toMatchObject({ stage: null, activeMs: null, step: null });
  });

  it("keeps a frame's unmatched-message samples (flows), null when it had none", async () => {
    const run = await insertRun(h.db, { plan });
    const [shard] = await insertShards(h.db, run.id, [plan]);
    const base = {
      runId: run.id,
      shardId: shard!.id,
      agentId: "agt_x",
      index: 0,
      startedAt: 1,
      durationMs: 1000,
      warmup: false,
      counters: {},
      histograms: {},
      health,
    };
    const samples = [
      { event: "presence", data: '{"user":"ann","online":true}' },
      { event: "presence", data: "<b>bob</b>" },
    ];
    await insertFrames(h.db, [
      { ...base, seq: 0, samples },
      { ...base, seq: 1, index: 1, samples: [] },
      { ...base, seq: 2, index: 2 },
    ]);
    expect((await listFrames(h.db, run.id)).map((f) => f.samples)).toEqual([samples, null, null]);
  });

  it("moves status forward once", async () => {
    const run = await insertRun(h.db, { plan });
    expect(await markRunRunning(h.db, run.id)).toBe(true);
    expect(await markRunRunning(h.db, run.id)).toBe(false);
    expect(await finishRun(h.db, run.id, { status: "aborted", reason: "stop" })).toBe(true);
    expect(await finishRun(h.db, run.id, { status: "passed" })).toBe(false);
    expect((await getRun(h.db, run.id))?.status).toBe("aborted");
  });
});
