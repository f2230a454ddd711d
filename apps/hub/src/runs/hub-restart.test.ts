import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { COUNTERS, FINAL_RUN_STATUSES, REDIS_KEYS, intervalFrameSchema, planSchema } from "@volley/contracts";
import { createDb, createTestDatabase, getRunMeter, getRunOfAnyOrg, insertRun, listFrames, listRunPoints, listShards, type DbHandle } from "@volley/db";
import { mergeTimeline, summarizeRun } from "@volley/metrics";
import { freePort, leaseRedisDb, startApp, type ManagedProcess, type RedisDbLease } from "@volley/devstack";
import { createRedis, enqueue, QUEUE_NAMES, runJob } from "@volley/queue";
import { TEST_AGENT_TOKEN } from "../test-support/hub-harness";
import { TARGET_PORTS_ANY } from "../test-support/real-agent";

/**
 * The hub as a real process, killed with SIGKILL mid-run and started again on the same port,
 * database and Redis, with a real agent process that spools its frames across the reconnect.
 *
 * What a restarted hub does with the run (hub.ts, shard-runner.ts adopt, run-execution.ts):
 * the agent reconnects holding its shard (the hello names it), and the new hub adopts it: a lease
 * at once, so its frames and spooled shard.end are accepted, and a supervisor that records the
 * shard's end. The run's BullMQ job stalls (its lock is not renewed); the new hub's run worker
 * takes it back as `recovered` 15–30 s later (lock 15 s + stalled check every 15 s), sees the run
 * had started, and supervises it to its end. The old shard job is failed as stalled
 * (maxStalledCount 0: never handed to a second agent). Frames the dead hub acked are in the Redis
 * stream, and the new aggregator claims the entries the dead one read but never stored.
 */
const output: string[] = [];
const processes: ManagedProcess[] = [];
let dbh: DbHandle;
let dropDb: () => Promise<void>;
let lease: RedisDbLease;
let redis: Redis;
let runs: Queue;
let env: NodeJS.ProcessEnv;

const tail = () => output.slice(-40).join("\n");

beforeAll(async () => {
  const testDb = await createTestDatabase(inject("databaseServerUrl"));
  dropDb = testDb.drop;
  lease = await leaseRedisDb(inject("redisUrl"));
  const redisUrl = lease.url;
  redis = createRedis(redisUrl);
  const port = await freePort();
  env = {
    ...process.env,
    DATABASE_URL: testDb.url,
    REDIS_URL: redisUrl,
    HUB_PORT: String(port),
    HUB_URL: `http://127.0.0.1:${port}`,
    AGENT_TOKEN: TEST_AGENT_TOKEN,
    LOG_LEVEL: "info",
  };
  dbh = createDb(testDb.url, 2);
  runs = new Queue(QUEUE_NAMES.runs, { connection: redis });
});
afterAll(async () => {
  for (const p of processes.reverse()) await p.stop(3000);
  await runs?.close();
  redis?.disconnect();
  await dbh?.close();
  await dropDb?.().catch(() => {});
  await lease?.release();
});

function start(app: "hub" | "agent" | "targets", name: string, extra: NodeJS.ProcessEnv = {}): ManagedProcess {
  const p = startApp(app, { ...env, ...extra }, (l) => output.push(`[${name}] ${l}`));
  processes.push(p);
  return p;
}

/** Every (shardId, seq) XADDed to the run's stream: the gateway acks a frame only after its XADD. */
async function streamSeqs(runId: string): Promise<Set<string>> {
  const entries = (await redis.xrange(REDIS_KEYS.frames(runId), "-", "+")) as Array<[string, string[]]>;
  return new Set(entries.map(([, f]) => intervalFrameSchema.parse(JSON.parse(f[f.indexOf("f") + 1]!))).map((fr) => `${fr.shardId}:${fr.seq}`));
}

describe("the hub process killed mid-run and started again", () => {
  it("adopts the running shard, finishes the run as if nothing happened, and stores every frame the agent made exactly once", async () => {
    const targets = start("targets", "targets", TARGET_PORTS_ANY);
    const echoUrl = (await targets.waitFor(/ws echo listening on ws:\/\/\S+/, 60_000)).match(/ws:\/\/[^\s"]+/)![0];
    const hub1 = start("hub", "hub-1");
    await hub1.waitFor(/hub listening/, 90_000);
    const agent = start("agent", "agent", { AGENT_NAME: "spooler", AGENT_POOL: "restart" });
    await agent.waitFor(/connected to/, 60_000);

    const plan = planSchema.parse({
      name: "hub restart",
      target: { url: echoUrl, protocol: "ws" },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", message: { bytes: 32, rate: 5 }, duration: "12s" },
      agents: { pool: "restart", count: 1 },
    });
    const run = await insertRun(dbh.db, { plan });
    await enqueue(runs, runJob, { runId: run.id });

    // Kill once the first frames are acked (in the stream) and one is stored.
    await expect
      .poll(async () => (await redis.xlen(REDIS_KEYS.frames(run.id))) >= 2 && (await listFrames(dbh.db, run.id)).length >= 1, {
        timeout: 60_000,
        interval: 100,
      })
      .toBe(true);
    const killedAt = Date.now();
    hub1.child.kill("SIGKILL");
    expect(await hub1.exited).toBe("SIGKILL");
    const ackedBeforeKill = await streamSeqs(run.id);
    expect(ackedBeforeKill.size).toBeGreaterThanOrEqual(2);
    const connectsBefore = output.filter((l) => l.startsWith("[agent]") && /connected to/.test(l)).length;

    const hub2 = start("hub", "hub-2");
    await hub2.waitFor(/hub listening/, 90_000);
    // The agent reconnects by itself (socket.io backoff, at most 15 s between tries).
    await expect
      .poll(() => output.filter((l) => l.startsWith("[agent]") && /connected to/.test(l)).length, { timeout: 45_000, interval: 200 })
      .toBeGreaterThan(connectsBefore);

    // The agent runs its whole schedule (nothing told it to stop) and reports its totals.
    const reconnectedAt = Date.now();
    const endLine = await agent.waitFor(/shard \S+ (completed|aborted|errored)/, 60_000);
    const totals = (JSON.parse(endLine) as { totals: { sent: number; received: number } }).totals;
    expect(totals.sent).toBeGreaterThan(0);

    // Stall detection (≤ 30 s), then the resumed supervision waits for the stored frames.
    const deadline = Date.now() + 200_000;
    let final = await getRunOfAnyOrg(dbh.db, run.id);
    while (!final || !FINAL_RUN_STATUSES.includes(final.status)) {
      if (Date.now() > deadline) throw new Error(`run still ${final?.status} 200 s after the hub restart\n${tail()}`);
      await new Promise((r) => setTimeout(r, 250));
      final = await getRunOfAnyOrg(dbh.db, run.id);
    }
    const endedAt = Date.now();
    expect(final.status, `${final.reason}\n${tail()}`).toBe("passed");
    // The shard.end the agent spooled across the restart was taken by the adopting hub, first time or on a retry.
    expect(
      output.some((l) => l.startsWith("[hub-2]") && /adopted a running shard/.test(l)),
      tail(),
    ).toBe(true);
    expect(
      output.some((l) => l.startsWith("[agent]") && /dropping it/.test(l)),
      tail(),
    ).toBe(false);

    // Every frame the agent made is stored exactly once: seqs 0..n-1, no gaps, no duplicates, and
    // their counts add up to the agent's own totals. Every entry acked before the kill is among them.
    const [shard] = await listShards(dbh.db, run.id);
    await expect
      .poll(async () => (await listFrames(dbh.db, run.id)).reduce((n, f) => n + (f.counters[COUNTERS.sent] ?? 0), 0), { timeout: 60_000, interval: 250 })
      .toBe(totals.sent);
    const frames = await listFrames(dbh.db, run.id);
    const seqs = frames.map((f) => f.seq).sort((a, b) => a - b);
    expect(seqs).toEqual([...seqs.keys()]);
    expect(frames.every((f) => f.shardId === shard!.id)).toBe(true);
    expect(shard).toMatchObject({ status: "completed", frames: frames.length });
    const stored = new Set(frames.map((f) => `${f.shardId}:${f.seq}`));
    for (const k of await streamSeqs(run.id)) expect(stored.has(k), `stream entry ${k} not stored`).toBe(true);
    for (const k of ackedBeforeKill) expect(stored.has(k)).toBe(true);
    expect(frames.reduce((n, f) => n + (f.counters[COUNTERS.received] ?? 0), 0)).toBe(totals.received);
    // The summary was taken after the agent had finished: the run waited for the adopted shard's end.
    expect(final.summary?.messages.sent).toBe(totals.sent);
    // hub-2 took the run over and rebuilt its meter from the stored frames: the final summary, the
    // merged timeline and the meter's row are what a from-scratch merge of every raw frame gives.
    expect(
      output.some((l) => l.startsWith("[hub-2]") && /resuming a run whose hub stopped/.test(l)),
      tail(),
    ).toBe(true);
    const { start: _start, ...measured } = final.summary!;
    expect(measured).toEqual(summarizeRun(frames, plan.thresholds, plan));
    expect(await listRunPoints(dbh.db, run.id)).toEqual(mergeTimeline(frames));
    expect((await getRunMeter(dbh.db, run.id))?.summary).toEqual(final.summary);
    console.info(
      `hub restart: agent back ${((reconnectedAt - killedAt) / 1000).toFixed(1)} s after the kill, run completed ${((endedAt - killedAt) / 1000).toFixed(1)} s after it; ` +
        `${ackedBeforeKill.size} frames acked before the kill, ${frames.length} stored in all, ${totals.sent} messages sent`,
    );
    console.info(
      output.filter((l) => l.startsWith("[hub-2]") && /adopt|resum|stood down|claimed stale|run finished|shard job|stalled|refused/.test(l)).join("\n"),
    );
  }, 300_000);
});
