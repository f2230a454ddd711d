import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { leaseRedisDb, type RedisDbLease } from "@volley/devstack";
import { COUNTERS, HISTOGRAMS, type IntervalFrame, type IntervalPoint, type Plan, type Run, type RunAnalysis } from "@volley/contracts";
import {
  createApiToken,
  createDb,
  createTestDatabase,
  DEFAULT_ORG_ID,
  finishRun,
  insertFrames,
  insertRun,
  insertShards,
  listFrames,
  markRunRunning,
  pruneRunFrames,
  saveRunMeter,
  upsertAgent,
  upsertRunPoints,
  type DbHandle,
} from "@volley/db";
import { IntervalMerger, IntervalRecorder, RunTally, summarizeRun } from "@volley/metrics";
import type { RouteHandler } from "../http/api-handler";

// What web reads of a run comes from the merged rows the hub's run meter writes (run_meters,
// run_points), not from raw frames: with the raw frames gone (retention), every reader answers the same.
let routes: { run: RouteHandler; intervals: RouteHandler; analysis: RouteHandler };
let closeServices: () => Promise<void>;
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;
let bearer = "";
let lease: RedisDbLease;

beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  process.env.DATABASE_URL = testDb.url;
  lease = await leaseRedisDb(inject("redisUrl"));
  process.env.REDIS_URL = lease.url;
  process.env.LOG_LEVEL = "silent";
  h = createDb(testDb.url, 2);
  ({ secret: bearer } = await createApiToken(h.db, { orgId: DEFAULT_ORG_ID, name: "meter test", scopes: ["read"] }));
  routes = {
    run: (await import("@/app/api/v1/runs/[id]/route")).GET,
    intervals: (await import("@/app/api/v1/runs/[id]/intervals/route")).GET,
    analysis: (await import("@/app/api/v1/runs/[id]/analysis/route")).GET,
  };
  ({ closeServices } = await import("../http/services"));
});
afterAll(async () => {
  await closeServices?.();
  await h?.close();
  await testDb?.drop();
  await lease?.release();
});

const get = async <T>(route: RouteHandler, path: string, id: string): Promise<T> => {
  const res = await route(new Request(`http://web.test${path}`, { headers: { authorization: `Bearer ${bearer}` } }), { params: Promise.resolve({ id }) });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
};

const plan: Plan = {
  name: "metered",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws", connectTimeout: "10s" },
  connections: { count: 2, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 5, per: "connection", arrival: "constant", timeout: "10s" }, duration: "3s", warmup: "1s" },
  thresholds: ["latency.p95 < 200ms"],
  agents: { pool: "default", count: 2 },
};

function frame(runId: string, shardId: string, agentId: string, seq: number, latenciesMs: number[]): IntervalFrame {
  const r = new IntervalRecorder();
  for (const ms of latenciesMs) {
    r.recordMicros(HISTOGRAMS.messageLatency, ms * 1000);
    r.increment(COUNTERS.sent);
    r.increment(COUNTERS.received);
  }
  const health = { cpu: 5, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 80, sendLagMaxMs: 1, saturated: false };
  return { runId, shardId, agentId, seq, index: seq, startedAt: 1_000_000 + seq * 1000, durationMs: 1000, warmup: seq === 0, ...r.take(), health };
}

/** What the hub's meter writes for these frames (the same metrics classes it folds them with). */
async function meterRows(runId: string, frames: IntervalFrame[], final: boolean) {
  const tally = new RunTally();
  const seconds = new Map<number, IntervalMerger>();
  for (const f of frames) {
    tally.add(f);
    if (!seconds.has(f.index)) seconds.set(f.index, new IntervalMerger(f.index));
    seconds.get(f.index)!.add(f);
  }
  await upsertRunPoints(
    h.db,
    runId,
    [...seconds.values()].map((m) => ({ point: m.point(), histograms: m.histograms(), frames: m.frameCount })),
  );
  const summary = tally.summary(plan.thresholds, final ? plan : { ...plan, sanity: false });
  await saveRunMeter(h.db, runId, { frames: tally.frames, summary, analysis: tally.analysis() });
  return summary;
}

async function runWithFrames(agentIds = ["agt_a", "agt_b"]) {
  const row = await insertRun(h.db, { plan });
  await markRunRunning(h.db, row.id);
  const [a, b] = await insertShards(h.db, row.id, [plan, plan]);
  const frames = [0, 1, 2].flatMap((s) => [frame(row.id, a!.id, agentIds[0]!, s, [10 + s, 20, 30]), frame(row.id, b!.id, agentIds[1]!, s, [40, 50 + s])]);
  await insertFrames(h.db, frames);
  return { id: row.id, frames };
}

describe("run readers", () => {
  it("answer a finished run from its merged rows: the same summary, timeline and analysis once retention deleted its raw frames", async () => {
    const { id, frames } = await runWithFrames();
    const summary = await meterRows(id, frames, true);
    await finishRun(h.db, id, { status: "passed", summary });
    const before = {
      run: await get<Run>(routes.run, `/api/v1/runs/${id}`, id),
      intervals: await get<{ intervals: IntervalPoint[] }>(routes.intervals, `/api/v1/runs/${id}/intervals`, id),
      analysis: await get<RunAnalysis>(routes.analysis, `/api/v1/runs/${id}/analysis`, id),
    };
    expect(before.run.summary).toEqual(summarizeRun(await listFrames(h.db, id), plan.thresholds, plan));
    expect(before.intervals.intervals.map((p) => [p.index, p.sent])).toEqual([
      [0, 5],
      [1, 5],
      [2, 5],
    ]);
    expect(before.analysis.agents.map((a) => a.agentId)).toEqual(["agt_a", "agt_b"]);
    // No agents rows by those ids (removed since): no name, the id stands.
    expect(before.analysis.agents.map((a) => a.agentName)).toEqual([null, null]);

    const pruned = await pruneRunFrames(h.db, new Date(Date.now() + 60_000));
    expect(pruned.runs).toContain(id);
    expect(await listFrames(h.db, id)).toHaveLength(0);
    expect(await get<Run>(routes.run, `/api/v1/runs/${id}`, id)).toEqual(before.run);
    expect(await get(routes.intervals, `/api/v1/runs/${id}/intervals`, id)).toEqual(before.intervals);
    expect(await get(routes.analysis, `/api/v1/runs/${id}/analysis`, id)).toEqual(before.analysis);
  });

  it("name each agent of the per-agent breakdown as the Agents page does", async () => {
    const hello = (name: string) => ({
      token: "unused",
      instanceId: `${name}-instance`,
      name,
      version: "0.1.0",
      pool: "default",
      labels: {},
      capacity: { cores: 2, memoryMb: 2048, maxConnections: 1000, sourceAddresses: [] },
    });
    const [east, west] = [await upsertAgent(h.db, hello("load-east")), await upsertAgent(h.db, hello("load-west"))];
    const { id, frames } = await runWithFrames([east.id, west.id]);
    await finishRun(h.db, id, { status: "passed", summary: await meterRows(id, frames, true) });
    const analysis = await get<RunAnalysis>(routes.analysis, `/api/v1/runs/${id}/analysis`, id);
    expect(analysis.agents.map((a) => [a.agentId, a.agentName]).sort()).toEqual(
      [
        [east.id, "load-east"],
        [west.id, "load-west"],
      ].sort(),
    );
  });

  it("answer a running run with the meter's live summary and timeline, not a merge of the raw frames stored since", async () => {
    const { id, frames } = await runWithFrames();
    // The meter has folded the first second only; the raw frames of seconds 1 and 2 are stored already.
    const live = await meterRows(
      id,
      frames.filter((f) => f.index === 0),
      false,
    );
    const run = await get<Run>(routes.run, `/api/v1/runs/${id}`, id);
    expect(run.summary).toEqual(live);
    expect(run.summary?.messages.sent).toBe(5);
    const { intervals } = await get<{ intervals: IntervalPoint[] }>(routes.intervals, `/api/v1/runs/${id}/intervals`, id);
    expect(intervals.map((p) => p.index)).toEqual([0]);
  });
});
