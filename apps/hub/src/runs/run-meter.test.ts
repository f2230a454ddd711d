import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { pino } from "pino";
import { Server } from "socket.io";
import { createAdapter } from "@socket.io/redis-adapter";
import { io as connect, type Socket } from "socket.io-client";
import { COUNTERS, LIVE_FEED, type IntervalFrame, type LivePoints, type RunEvent } from "@volley/contracts";
import {
  createDb,
  createTestDatabase,
  getRunMeter,
  insertFrames,
  insertRun,
  insertShards,
  listFrames,
  listRunPointRows,
  type Db,
  type DbHandle,
} from "@volley/db";
import { analyzeFrames, decodeHistogram, mergeEncoded, mergeTimeline, summarizeRun } from "@volley/metrics";
import { createRedis } from "@volley/queue";
import type { Redis } from "ioredis";
import { leaseRedisDb, type RedisDbLease } from "@volley/devstack";
import { testFrame, testPlan } from "../test-support/fixtures";
import { LiveFeed } from "./live-feed";
import { RunMeter } from "./run-meter";

let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;
let lease: RedisDbLease;
let pub: Redis;
let sub: Redis;
let emitterRedis: Redis;
let http: HttpServer;
let server: Server;
let client: Socket;
const log = pino({ level: "silent" });

// A stand-in for web's /live namespace: a Socket.IO server with the Redis adapter that joins a
// subscriber to its run's room. The meter pushes through the hub's emitter, as in production.
beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  h = createDb(testDb.url, 4);
  lease = await leaseRedisDb(inject("redisUrl"));
  [pub, sub, emitterRedis] = [createRedis(lease.url), createRedis(lease.url), createRedis(lease.url)];
  http = createServer();
  server = new Server(http, { adapter: createAdapter(pub, sub) });
  server
    .of(LIVE_FEED.namespace)
    .on("connection", (s) =>
      s.on(LIVE_FEED.events.subscribe, (m: { runId: string }, ack: () => void) => void Promise.resolve(s.join(LIVE_FEED.room(m.runId))).then(ack)),
    );
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  client = connect(`http://127.0.0.1:${(http.address() as AddressInfo).port}${LIVE_FEED.namespace}`, { transports: ["websocket"] });
});
afterAll(async () => {
  client?.close();
  await new Promise((r) => server?.close(r));
  for (const c of [pub, sub, emitterRedis]) c?.disconnect();
  await h?.close();
  await testDb?.drop();
  await lease?.release();
});

function collect<T>(event: string, until: (all: T[]) => boolean, timeoutMs = 5000): Promise<T[]> {
  const all: T[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${all.length} ${event} events: ${JSON.stringify(all)}`)), timeoutMs);
    const on = (m: T) => {
      all.push(m);
      if (until(all)) {
        clearTimeout(timer);
        client.off(event, on);
        resolve(all);
      }
    };
    client.on(event, on);
  });
}

/** A run with `shards` shards and their frames for `seconds` seconds, latencies varied per shard and second. */
async function runWithFrames(shards: number, seconds: number) {
  const plan = testPlan({ thresholds: ["latency.p95 < 30ms"] });
  const run = await insertRun(h.db, { plan });
  const rows = await insertShards(
    h.db,
    run.id,
    Array.from({ length: shards }, () => plan),
  );
  const frames: IntervalFrame[] = [];
  for (const [k, sh] of rows.entries())
    for (let s = 0; s < seconds; s++)
      frames.push(
        testFrame(
          { runId: run.id, shardId: sh.id, agentId: `agt_${k}` },
          s,
          Array.from({ length: 3 + ((s * 7 + k) % 9) }, (_, i) => 1 + ((s * 13 + k * 31 + i * 17) % 60)),
          { startedAt: 1_000_000 + s * 1000 + k, warmup: s < 2 },
        ),
      );
  return { run, plan, frames };
}

/** The stored merged rows equal a from-scratch merge of every stored raw frame: points, and each second's histogram bucket by bucket. */
async function expectMergedRowsExact(db: Db, runId: string) {
  const raw = await listFrames(db, runId);
  const rows = await listRunPointRows(db, runId);
  expect(rows.map((r) => r.point)).toEqual(mergeTimeline(raw));
  for (const row of rows) {
    const fresh = mergeEncoded(
      raw.filter((f) => f.index === row.index).flatMap((f) => (f.histograms["message.latency"] ? [f.histograms["message.latency"]] : [])),
    );
    const stored = decodeHistogram(row.histograms["message.latency"]!);
    expect(row.frames).toBe(raw.filter((f) => f.index === row.index).length);
    expect(stored.totalCount).toBe(fresh.totalCount);
    for (const p of [0, 50, 90, 99, 99.9, 100]) expect(stored.getValueAtPercentile(p)).toBe(fresh.getValueAtPercentile(p));
    const buckets = (x: typeof stored) =>
      Array.from(
        { length: 1 + (x as unknown as { countsArrayIndex(v: number): number }).countsArrayIndex(Math.max(stored.maxValue, fresh.maxValue)) },
        (_, i) => (x as unknown as { getCountAtIndex(i: number): number }).getCountAtIndex(i),
      );
    expect(buckets(stored)).toEqual(buckets(fresh));
  }
}

/**
 * Running reconciles until one reads nothing above the watermark (every stored frame settled); the
 * rows each read. Other test files' transactions on the same server may hold the watermark a moment.
 */
async function reconcileUntilSettled(meter: RunMeter): Promise<number[]> {
  const examined: number[] = [];
  for (let i = 0; i < 200; i++) {
    const r = await meter.reconcile("running");
    expect(r.folded).toBe(0);
    examined.push(r.examined);
    if (r.examined === 0) return examined;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the watermark did not settle: ${examined.join(", ")}`);
}

describe("run meter", () => {
  it("folds each stored frame once, in any order and however late, into merged rows equal to a from-scratch merge of all raw frames", async () => {
    const { run, plan, frames } = await runWithFrames(3, 40);
    const meter = new RunMeter({ db: h.db, runId: run.id, plan, log, summaryEveryMs: 0 });
    // Arrival: mostly in order, shard 2 a batch at a time and 30 s late (past the meter's window), one frame resent.
    const onTime = frames.filter((f) => f.agentId !== "agt_2");
    for (let s = 0; s < 40; s += 5) {
      await insertFrames(
        h.db,
        onTime.filter((f) => f.index >= s && f.index < s + 5),
      );
      await meter.poll();
    }
    const late = frames.filter((f) => f.agentId === "agt_2");
    await insertFrames(h.db, late.slice(0, 10));
    await meter.poll();
    await insertFrames(h.db, late.slice(5));
    await meter.poll();
    await meter.poll(); // nothing new: nothing changes
    expect(meter.frames).toBe(frames.length);
    await expectMergedRowsExact(h.db, run.id);

    const raw = await listFrames(h.db, run.id);
    const stored = await getRunMeter(h.db, run.id);
    expect(stored?.frames).toBe(frames.length);
    expect(stored?.summary).toEqual(summarizeRun(raw, plan.thresholds, { ...plan, sanity: false }));
    expect(meter.summary(true)).toEqual(summarizeRun(raw, plan.thresholds, plan));
    await meter.saveFinal(meter.summary(true));
    expect((await getRunMeter(h.db, run.id))?.analysis).toEqual(analyzeFrames(raw));
  });

  it("finds a frame whose insert committed after a later one (two hubs storing one run) when it reconciles", async () => {
    const { run, plan, frames } = await runWithFrames(2, 2);
    const meter = new RunMeter({ db: h.db, runId: run.id, plan, log, summaryEveryMs: 0 });
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    let inserted!: () => void;
    const insertedEarly = new Promise<void>((r) => (inserted = r));
    // Frame 0 takes the lower id but commits last.
    const slow = h.db.transaction(async (tx) => {
      await insertFrames(tx as unknown as Db, [frames[0]!]);
      inserted();
      await held;
    });
    await insertedEarly;
    await insertFrames(h.db, frames.slice(1));
    await meter.poll();
    commit();
    await slow;
    await meter.poll();
    expect(meter.frames).toBe(frames.length - 1); // the id cursor is past it
    expect((await meter.reconcile()).folded).toBe(1);
    expect(meter.frames).toBe(frames.length);
    await expectMergedRowsExact(h.db, run.id);
  });

  it("a running reconcile reads only the frames above its settled watermark, and the watermark never passes an insert still open", async () => {
    const { run, plan, frames } = await runWithFrames(2, 60);
    const meter = new RunMeter({ db: h.db, runId: run.id, plan, log, summaryEveryMs: 0 });
    const first = frames.filter((f) => f.index < 40);
    await insertFrames(h.db, first);
    await meter.poll();
    // The first reads all 80 (nothing settled yet); the watermark moves within a few reconciles.
    expect((await reconcileUntilSettled(meter))[0]).toBe(first.length);

    // An insert takes its id, then frames with higher ids commit before it, while reconciles go on.
    const held = frames.find((f) => f.index === 40)!;
    const rest = frames.filter((f) => f.index >= 40 && f !== held);
    let commit!: () => void;
    const committed = new Promise<void>((r) => (commit = r));
    let inserted!: () => void;
    const insertedEarly = new Promise<void>((r) => (inserted = r));
    const slow = h.db.transaction(async (tx) => {
      await insertFrames(tx as unknown as Db, [held]);
      inserted();
      await committed;
    });
    await insertedEarly;
    await insertFrames(h.db, rest);
    await meter.poll();
    // Each reads exactly the frames stored since the watermark: not the settled 80, not fewer while the insert is open.
    for (let i = 0; i < 5; i++) {
      expect(await meter.reconcile("running")).toEqual({ folded: 0, examined: rest.length });
      await new Promise((r) => setTimeout(r, 20));
    }
    commit();
    await slow;
    await meter.poll();
    expect(meter.frames).toBe(frames.length - 1); // the id cursor is past it
    expect(await meter.reconcile("running")).toEqual({ folded: 1, examined: rest.length + 1 });
    expect((await meter.reconcile("running")).folded).toBe(0); // once
    expect(meter.frames).toBe(frames.length);
    await reconcileUntilSettled(meter);
    await expectMergedRowsExact(h.db, run.id);
    expect(meter.summary(true)).toEqual(summarizeRun(await listFrames(h.db, run.id), plan.thresholds, plan));
  });

  it("the final reconcile still finds a frame stored below the settled watermark, which a running one does not read", async () => {
    const { run, plan, frames } = await runWithFrames(2, 10);
    const meter = new RunMeter({ db: h.db, runId: run.id, plan, log, summaryEveryMs: 0 });
    await insertFrames(h.db, frames.slice(1));
    await meter.poll();
    await reconcileUntilSettled(meter);
    // Stands for an insert that held its id for longer than the watermark's wait: stored below it.
    await insertFrames(h.db, frames.slice(0, 1));
    await h.pool.query("UPDATE run_intervals SET id = (SELECT min(id) - 1 FROM run_intervals) WHERE shard_id = $1 AND seq = $2", [
      frames[0]!.shardId,
      frames[0]!.seq,
    ]);
    await meter.poll();
    expect(await meter.reconcile("running")).toEqual({ folded: 0, examined: 0 });
    expect(meter.frames).toBe(frames.length - 1);
    expect(await meter.reconcile()).toEqual({ folded: 1, examined: 0 });
    expect(meter.frames).toBe(frames.length);
    await expectMergedRowsExact(h.db, run.id);
  });

  it("a hub taking the run over rebuilds the same meter from what is stored, and goes on from there", async () => {
    const { run, plan, frames } = await runWithFrames(2, 90);
    const first = new RunMeter({ db: h.db, runId: run.id, plan, log });
    const before = frames.filter((f) => f.index < 70);
    await insertFrames(h.db, before);
    await first.poll();
    // The hub dies; another replica replays the stored frames (in slices of seconds), then more arrive.
    const taken = await RunMeter.replay({ db: h.db, runId: run.id, plan, log });
    expect(taken.frames).toBe(before.length);
    expect(taken.summary(false)).toEqual(first.summary(false));
    expect(taken.tally.analysis()).toEqual(first.tally.analysis());
    await insertFrames(
      h.db,
      frames.filter((f) => f.index >= 70),
    );
    await taken.poll();
    expect(taken.frames).toBe(frames.length);
    expect(taken.summary(true)).toEqual(summarizeRun(await listFrames(h.db, run.id), plan.thresholds, plan));
    await expectMergedRowsExact(h.db, run.id);
  });

  it("pushes the merged points of the seconds new frames touched, and status changes, to the run's room only", async () => {
    const run = await insertRun(h.db, { plan: testPlan() });
    const other = await insertRun(h.db, { plan: testPlan() });
    const [a, b] = await insertShards(h.db, run.id, [testPlan(), testPlan()]);
    const ids = (shardId: string, agentId: string) => ({ runId: run.id, shardId, agentId });
    await client.emitWithAck(LIVE_FEED.events.subscribe, { runId: run.id });
    const feed = new LiveFeed({ redis: emitterRedis });
    const meter = new RunMeter({ db: h.db, runId: run.id, plan: testPlan(), log, onPoints: (id, points) => feed.points(id, points) });

    const first = collect<LivePoints>(LIVE_FEED.events.points, (all) => all.length >= 1);
    await insertFrames(h.db, [testFrame(ids(a!.id, "agt_a"), 0, [10, 20]), testFrame(ids(a!.id, "agt_a"), 1, [30])]);
    await meter.poll();
    const [p1] = await first;
    expect(p1!.points.map((p) => [p.index, p.sent])).toEqual([
      [0, 2],
      [1, 1],
    ]);

    // Shard b's frame for second 1 lands later: only second 1 is re-sent, merged across both shards.
    const second = collect<LivePoints>(LIVE_FEED.events.points, (all) => all.length >= 1);
    await insertFrames(h.db, [testFrame(ids(b!.id, "agt_b"), 1, [40, 50])]);
    await meter.poll();
    const [p2] = await second;
    expect(p2!.points).toHaveLength(1);
    expect(p2!.points[0]).toMatchObject({ index: 1, sent: 3, health: { agents: 2 } });
    expect(p2!.points[0]!.max).toBeCloseTo(50, 0);

    const statuses = collect<RunEvent>(LIVE_FEED.events.status, (all) => all.length >= 1);
    feed.status({ type: "status", runId: other.id, status: "running", reason: null, at: Date.now() });
    feed.status({ type: "status", runId: run.id, status: "passed", reason: null, at: Date.now() });
    expect((await statuses).map((e) => [e.runId, e.type === "status" && e.status])).toEqual([[run.id, "passed"]]);
  });

  it("leaves out a stored histogram it cannot decode, names it in the summary, and folds the rest: polled, re-merged or replayed", async () => {
    const { run, plan, frames } = await runWithFrames(2, 20);
    // A row as an older version or damage to the database left it: the gateway refuses one at ingest.
    const bad = frames.find((f) => f.agentId === "agt_1" && f.index === 3)!;
    bad.histograms["message.latency"] = Buffer.from([0x1c, 0x84, 0x93, 0x14, 0, 0, 0, 4, 1, 2, 3, 4]).toString("base64");
    const meter = new RunMeter({ db: h.db, runId: run.id, plan, log, summaryEveryMs: 0 });
    await insertFrames(
      h.db,
      frames.filter((f) => f !== bad),
    );
    await meter.poll();
    await insertFrames(h.db, [bad]); // late: its second is past the window, merged again from what is stored
    await meter.poll();
    expect(meter.frames).toBe(frames.length);
    const summary = meter.summary(true)!;
    const sent = frames.reduce((n, f) => n + (f.counters[COUNTERS.sent] ?? 0), 0);
    expect(summary.messages.sent).toBe(sent);
    expect(summary.leftOut).toMatchObject({ histograms: 1, metrics: [{ metric: "message.latency", count: 1, intervals: [3] }] });
    const point = (await listRunPointRows(h.db, run.id)).find((r) => r.point.index === 3)!.point;
    expect(point.sent).toBe(frames.filter((f) => f.index === 3).reduce((n, f) => n + (f.counters[COUNTERS.sent] ?? 0), 0));
    expect(point.p50).not.toBeNull(); // agt_0's histogram of that second

    const replayed = await RunMeter.replay({ db: h.db, runId: run.id, plan, log });
    expect(replayed.summary(true)).toEqual(summary);
  });
});
