import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { AGGREGATOR_GROUP, REDIS_KEYS, runFinishedPayloadSchema, type RunFinishedPayload, type ShardJob } from "@volley/contracts";
import { createWebhook, DEFAULT_ORG_ID, getRunOfAnyOrg } from "@volley/db";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";

const h = useHubHarness({ armTimeoutMs: 5000, storeWaitMs: 5000 });

describe("measured start skew", () => {
  it("records the agents' reported actual starts vs the planned instant on the run row and in the summary", async () => {
    const [a1, a2] = [await h.connect({ name: "skew-early", pool: "skew" }), await h.connect({ name: "skew-late", pool: "skew" })];
    const runId = await h.startRun(testPlan({ agents: { pool: "skew", count: 2 }, connections: { count: 4 } }));
    const jobs = (await Promise.all([a1, a2].map((a) => a.until((r) => r.assign.find((j) => j.runId === runId))))) as [ShardJob, ShardJob];
    const [s1, s2] = await Promise.all([a1.nextStart(), a2.nextStart()]);
    expect(s1.startAt).toBe(s2.startAt);
    const plannedAt = s1.startAt;
    // One agent began 0.4 ms after the planned instant, the other 7.25 ms after.
    const late = [0.4, 7.25];
    for (const [i, a] of [a1, a2].entries()) {
      const ids = { runId, shardId: jobs[i]!.shardId, agentId: a.agentId };
      const frame = { ...testFrame(ids, 0, [5], { startedAt: plannedAt }), start: { plannedAt, startedAt: plannedAt + late[i]! } };
      expect(await a.sendFrame(frame)).toEqual({ ok: true });
      expect(await a.sendFrame(testFrame(ids, 1, [5], { startedAt: plannedAt + 1000 }))).toEqual({ ok: true });
      await a.end({ runId, shardId: ids.shardId, status: "completed", frames: 2 });
    }
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("passed");
    expect(run.startSkewMs).toBe(6.85);
    expect(run.startLateMs).toBe(7.25);
    expect(run.summary?.start).toEqual({
      plannedAt,
      skewMs: 6.85,
      maxLateMs: 7.25,
      shards: expect.arrayContaining([
        { index: jobs[0]!.index, agentId: a1.agentId, agentName: "skew-early", startedAt: plannedAt + 0.4, lateMs: 0.4 },
        { index: jobs[1]!.index, agentId: a2.agentId, agentName: "skew-late", startedAt: plannedAt + 7.25, lateMs: 7.25 },
      ]),
    });
    expect(run.summary?.start?.shards).toHaveLength(2);
  });

  it("leaves the report out when agents send none (older agents), keeping the frame-based skew", async () => {
    const a = await h.connect({ name: "skew-silent", pool: "skew-old" });
    const runId = await h.startRun(testPlan({ agents: { pool: "skew-old" } }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    const start = await a.nextStart();
    await a.sendFrame(testFrame({ runId, shardId: job.shardId, agentId: a.agentId }, 0, [5], { startedAt: start.startAt }));
    await a.end({ runId, shardId: job.shardId, status: "completed", frames: 1 });
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("passed");
    expect(run.summary?.start).toBeUndefined();
    expect(run.startLateMs).toBeNull();
    expect(run.startSkewMs).toBeNull(); // one shard: no spread
  });
});

/**
 * Storage that fails or crawls for some frames, as PostgreSQL did in the chaos soak: a trigger
 * refuses (delay null) or holds for `delay` seconds the inserts of the (shard, seq) pairs in
 * `test_store_gate` until the test removes them. The hub, its aggregator and its database are the
 * real ones; only the fault is staged.
 */
async function storeGate() {
  await h.db.pool.query(`
    CREATE TABLE IF NOT EXISTS test_store_gate (shard_id text NOT NULL, seq integer NOT NULL, delay float8, PRIMARY KEY (shard_id, seq));
    CREATE OR REPLACE FUNCTION test_store_gate() RETURNS trigger AS $$
    DECLARE d float8;
    BEGIN
      SELECT g.delay INTO d FROM test_store_gate g WHERE g.shard_id = NEW.shard_id AND g.seq = NEW.seq;
      IF FOUND AND d IS NULL THEN
        RAISE EXCEPTION 'test: storage of shard % seq % fails', NEW.shard_id, NEW.seq;
      ELSIF FOUND THEN
        PERFORM pg_sleep(d);
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql;
    DROP TRIGGER IF EXISTS test_store_gate ON run_intervals;
    CREATE TRIGGER test_store_gate BEFORE INSERT ON run_intervals FOR EACH ROW EXECUTE FUNCTION test_store_gate();
  `);
  return {
    fail: (shardId: string, seqs: number[]) => h.db.pool.query("INSERT INTO test_store_gate (shard_id, seq) SELECT $1, unnest($2::int[])", [shardId, seqs]),
    delay: (shardId: string, seqs: number[], seconds: number) =>
      h.db.pool.query("INSERT INTO test_store_gate (shard_id, seq, delay) SELECT $1, unnest($2::int[]), $3", [shardId, seqs, seconds]),
    open: (shardId: string, seqs: number[]) => h.db.pool.query("DELETE FROM test_store_gate WHERE shard_id = $1 AND seq = ANY($2::int[])", [shardId, seqs]),
  };
}

const stored = async (runId: string) => Number((await h.db.pool.query("SELECT count(*) AS n FROM run_intervals WHERE run_id = $1", [runId])).rows[0].n);
/** Entries the aggregator has read and not acknowledged (0 before its group exists). */
const pendingEntries = async (runId: string) => ((await h.redis.xpending(REDIS_KEYS.frames(runId), AGGREGATOR_GROUP).catch(() => [0])) as [number])[0];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

// The harness's storeWaitMs is 5 s: a wait that sees no storage progress for 5 s gives up.
describe("frames stored late", () => {
  it("finalization waits while the backlog drains, past the no-progress window, and judges every frame", async () => {
    const gate = await storeGate();
    const a = await h.connect({ name: "late-drain", pool: "late-drain" });
    const runId = await h.startRun(testPlan({ agents: { pool: "late-drain" }, thresholds: ["latency.p95 < 200ms"] }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    const start = await a.nextStart();
    const ids = { runId, shardId: job.shardId, agentId: a.agentId };
    // Each frame's insert takes 1.6 s: two batches of two store 3.2 s apart, 6.4 s in all, past the 5 s window.
    await gate.delay(ids.shardId, [0, 1, 2, 3], 1.6);
    const frame = (seq: number) =>
      testFrame(
        ids,
        seq,
        Array.from({ length: 20 }, () => 20),
        { startedAt: start.startAt + seq * 1000 },
      );
    for (const seq of [0, 1]) expect(await a.sendFrame(frame(seq))).toEqual({ ok: true });
    // The aggregator is storing 0-1 before 2-3 reach the stream: a second batch.
    await until("frames 0-1 read by the aggregator", async () => ((await pendingEntries(runId)) >= 2 ? true : undefined), 10_000);
    for (const seq of [2, 3]) expect(await a.sendFrame(frame(seq))).toEqual({ ok: true });
    expect(await a.end({ runId, shardId: ids.shardId, status: "completed", frames: 4 })).toEqual({ ok: true });

    // The first final state the run ever shows already counts all four frames.
    const run = await h.waitForFinal(runId, 30_000);
    expect(run.summary?.messages.sent).toBe(80);
    expect(run.status).toBe("passed");
    await gate.open(ids.shardId, [0, 1, 2, 3]);
  });

  it("restates a run whose frames landed after it was finalized: summary and threshold verdict from every frame, and tells its webhooks", async () => {
    const gate = await storeGate();
    // A real receiver of the org's run.finished webhook: the first verdict, then the corrected one.
    const received: RunFinishedPayload[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push(runFinishedPayloadSchema.parse(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await createWebhook(h.db.db, { orgId: DEFAULT_ORG_ID, url, events: ["run.finished"] }, null);
    const a = await h.connect({ name: "late-restate", pool: "late-restate" });
    const runId = await h.startRun(testPlan({ agents: { pool: "late-restate" }, thresholds: ["latency.p95 < 200ms"] }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    const start = await a.nextStart();
    const ids = { runId, shardId: job.shardId, agentId: a.agentId };
    const frame = (seq: number, ms: number) =>
      testFrame(
        ids,
        seq,
        Array.from({ length: 20 }, () => ms),
        { startedAt: start.startAt + seq * 1000 },
      );
    expect(await a.sendFrame(frame(0, 20))).toEqual({ ok: true });
    await until("frame 0 stored", async () => ((await stored(runId)) >= 1 ? true : undefined), 10_000);
    // The database refuses the slow seconds for longer than the finalizer waits without progress.
    await gate.fail(ids.shardId, [1, 2]);
    for (const seq of [1, 2]) expect(await a.sendFrame(frame(seq, 500))).toEqual({ ok: true });
    expect(await a.end({ runId, shardId: ids.shardId, status: "completed", frames: 3 })).toEqual({ ok: true });

    const judgedEarly = await h.waitForFinal(runId, 30_000);
    expect(judgedEarly.summary?.messages.sent).toBe(20);
    expect(judgedEarly.status).toBe("passed");

    await gate.open(ids.shardId, [1, 2]);
    const restated = await until(
      "the run restated with every frame",
      async () => {
        const run = await getRunOfAnyOrg(h.db.db, runId);
        return run?.summary?.messages.sent === 60 ? run : undefined;
      },
      30_000,
    );
    expect(restated.status).toBe("failed");
    expect(restated.reason).toMatch(/latency\.p95 = 50\d(\.\d+)?ms, limit < 200ms/);
    expect(restated.summary?.thresholds.find((t) => t.expression === "latency.p95 < 200ms")?.ok).toBe(false);
    expect(restated.endedAt).toEqual(judgedEarly.endedAt);

    // The webhook heard the early verdict, then the corrected run marked as a restatement of it.
    const deliveries = await until("two deliveries", async () => (received.filter((p) => p.run.id === runId).length >= 2 ? received : undefined), 20_000);
    const [first, second] = deliveries.filter((p) => p.run.id === runId);
    expect(first).toMatchObject({ event: "run.finished", run: { status: "passed" } });
    expect(first!.restatement).toBeUndefined();
    expect(first!.run.summary?.messages.sent).toBe(20);
    expect(second).toMatchObject({
      event: "run.finished",
      run: { status: "failed", reason: restated.reason },
      restatement: { previous: { status: "passed", reason: null }, why: expect.stringMatching(/2 late frames\) changed its outcome/) },
    });
    expect(second!.run.summary?.messages.sent).toBe(60);
    await sleep(1000);
    expect(received.filter((p) => p.run.id === runId)).toHaveLength(2);
  });
});
