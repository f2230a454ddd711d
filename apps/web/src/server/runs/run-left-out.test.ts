import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { leaseRedisDb, type RedisDbLease } from "@volley/devstack";
import { COUNTERS, HISTOGRAMS, type IntervalFrame, type IntervalPoint, type Plan, type Run, type RunAnalysis } from "@volley/contracts";
import { createApiToken, createDb, createTestDatabase, DEFAULT_ORG_ID, insertFrames, insertRun, insertShards, markRunRunning, type DbHandle } from "@volley/db";
import { IntervalRecorder } from "@volley/metrics";
import type { RouteHandler } from "../http/api-handler";

// A stored histogram that cannot be decoded (a row from an older version, or damaged in the
// database) is left out by every reader, which says so: one bad row never makes a run unreadable.
const ROUTES = ["run", "intervals", "intervals.csv", "analysis", "junit", "report.html"] as const;
let routes: Record<(typeof ROUTES)[number], RouteHandler>;
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
  ({ secret: bearer } = await createApiToken(h.db, { orgId: DEFAULT_ORG_ID, name: "left-out test", scopes: ["read"] }));
  routes = {
    run: (await import("@/app/api/v1/runs/[id]/route")).GET,
    intervals: (await import("@/app/api/v1/runs/[id]/intervals/route")).GET,
    "intervals.csv": (await import("@/app/api/v1/runs/[id]/intervals.csv/route")).GET,
    analysis: (await import("@/app/api/v1/runs/[id]/analysis/route")).GET,
    junit: (await import("@/app/api/v1/runs/[id]/junit/route")).GET,
    "report.html": (await import("@/app/api/v1/runs/[id]/report.html/route")).GET,
  };
  ({ closeServices } = await import("../http/services"));
});
afterAll(async () => {
  await closeServices?.();
  await h?.close();
  await testDb?.drop();
  await lease?.release();
});

const plan: Plan = {
  name: "damaged",
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

/** Stored straight into run_intervals, as an older version or damage to the database left it (the gateway refuses one at ingest). */
const damaged = Buffer.from([0x1c, 0x84, 0x93, 0x14, 0, 0, 0, 4, 1, 2, 3, 4]).toString("base64");

async function get(route: (typeof ROUTES)[number], id: string): Promise<Response> {
  return routes[route](new Request(`http://web.test/api/v1/runs/${id}/${route}`, { headers: { authorization: `Bearer ${bearer}` } }), {
    params: Promise.resolve({ id }),
  });
}

describe("a run with one undecodable stored histogram", () => {
  it("answers 200 from every reader, its counts intact, and names what was left out", async () => {
    const row = await insertRun(h.db, { plan });
    await markRunRunning(h.db, row.id);
    const [a, b] = await insertShards(h.db, row.id, [plan, plan]);
    const frames = [0, 1, 2].flatMap((s) => [frame(row.id, a!.id, "agt_a", s, [10, 20]), frame(row.id, b!.id, "agt_b", s, [30])]);
    frames[3]!.histograms[HISTOGRAMS.messageLatency] = damaged; // agt_b, second 1
    await insertFrames(h.db, frames);

    for (const route of ROUTES) expect([route, (await get(route, row.id)).status]).toEqual([route, 200]);

    const run = (await (await get("run", row.id)).json()) as Run;
    expect(run.summary?.messages.sent).toBe(9);
    expect(run.summary?.messages.received).toBe(9);
    expect(run.summary?.latency.count).toBe(5); // seconds 1 and 2 measured (2 + 1 each), less agt_b's damaged second 1
    expect(run.summary?.leftOut).toMatchObject({ histograms: 1, metrics: [{ metric: HISTOGRAMS.messageLatency, count: 1, intervals: [1] }] });
    const { intervals } = (await (await get("intervals", row.id)).json()) as { intervals: IntervalPoint[] };
    expect(intervals.map((p) => p.sent)).toEqual([3, 3, 3]);
    const analysis = (await (await get("analysis", row.id)).json()) as RunAnalysis;
    expect(analysis.agents.map((x) => [x.agentId, x.sent])).toEqual([
      ["agt_a", 6],
      ["agt_b", 3],
    ]);
    expect(await (await get("report.html", row.id)).text()).toContain("1 stored histogram could not be read");
    expect(await (await get("junit", row.id)).text()).toMatch(/<property name="volley.run.leftOut" value="1 stored histogram could not be read/);
  });
});
