import { describe, expect, it } from "vitest";
import "@volley/devstack/vitest-context";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { createAdapter } from "@socket.io/redis-adapter";
import { io as connectLive } from "socket.io-client";
import { COUNTERS, flowRows, LIVE_FEED, planSchema, REDIS_KEYS, type LivePoints, type RunEvent, type ShardJob } from "@volley/contracts";
import { getRunMeter, listFrames, listRunPoints, listShards } from "@volley/db";
import { IntervalRecorder } from "@volley/metrics";
import { createRedis } from "@volley/queue";
import { pino } from "pino";
import { startHub } from "./hub";
import type { ScriptedAgent } from "./test-support/scripted-agent";
import { TEST_AGENT_TOKEN } from "./test-support/hub-harness";
import { useHubHarness } from "./test-support/use-hub-harness";
import { testFrame, testPlan } from "./test-support/fixtures";

const h = useHubHarness({ armTimeoutMs: 1500, agentGraceMs: 500, abortEndTimeoutMs: 2000, storeWaitMs: 5000 });

const idsOf = (a: ScriptedAgent, job: ShardJob) => ({ runId: job.runId, shardId: job.shardId, agentId: a.agentId });

describe("hub run orchestration", () => {
  it("runs a plan end to end: assign → armed → start → frames → end → passed, with the summary from the frames", async () => {
    const a = await h.connect({ name: "agent-pass", pool: "pass" });
    // What a browser sees: web's /live namespace (a Socket.IO server on the hub's Redis, as web runs it) and a subscriber.
    const [pub, sub] = [createRedis(h.redisUrl), createRedis(h.redisUrl)];
    const http = createServer();
    const live = new Server(http, { adapter: createAdapter(pub, sub) });
    live
      .of(LIVE_FEED.namespace)
      .on("connection", (s) =>
        s.on(LIVE_FEED.events.subscribe, (m: { runId: string }, ack: () => void) => void Promise.resolve(s.join(LIVE_FEED.room(m.runId))).then(ack)),
      );
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    const browser = connectLive(`http://127.0.0.1:${(http.address() as AddressInfo).port}${LIVE_FEED.namespace}`, { transports: ["websocket"] });
    const statuses: RunEvent[] = [];
    const points: LivePoints[] = [];
    browser.on(LIVE_FEED.events.status, (e: RunEvent) => statuses.push(e));
    browser.on(LIVE_FEED.events.points, (p: LivePoints) => points.push(p));

    const plan = testPlan({ agents: { pool: "pass" }, thresholds: ["latency.p95 < 200ms", "errors.rate < 1%"], sanity: { maxLossPercent: 5 } });
    const runId = await h.startRun(plan);
    await browser.emitWithAck(LIVE_FEED.events.subscribe, { runId });
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId), 5000, "shard.assign");
    expect(job).toMatchObject({ runId, index: 0, count: 1 });
    expect(job.plan.connections.count).toBe(10);

    const start = await a.nextStart();
    expect(start.shardId).toBe(job.shardId);
    // One start instant, set in the future so every agent hears of it before it passes.
    expect(start.startAt).toBeGreaterThan(start.receivedAt);
    const latencies = [
      [10, 20, 30],
      [15, 25],
      [12, 18, 22, 40],
    ];
    for (const [seq, ms] of latencies.entries())
      expect(await a.sendFrame(testFrame(idsOf(a, job), seq, ms, { startedAt: start.startAt + seq * 1000 }))).toEqual({ ok: true });
    expect(await a.end({ runId, shardId: job.shardId, status: "completed", frames: 3 })).toEqual({ ok: true });

    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("passed");
    expect(run.reason).toBeNull();
    expect(run.summary?.messages.sent).toBe(9);
    expect(run.summary?.latency.count).toBe(9);
    expect(run.summary?.latency.max).toBeCloseTo(40, 0);
    // The plan's thresholds, then the default sanity checks, judged on the same merged frames.
    expect(run.summary?.thresholds.map((t) => [t.kind, t.ok])).toEqual([
      ["threshold", true],
      ["threshold", true],
      ["sanity", true],
      ["sanity", true],
      ["sanity", true],
    ]);
    expect(await listFrames(h.db.db, runId)).toHaveLength(3);
    const [shard] = await listShards(h.db.db, runId);
    expect(shard).toMatchObject({ status: "completed", agentId: a.agentId, frames: 3 });
    // The run's meter wrote the merged timeline and the final summary; the browser got its points and the end.
    expect((await listRunPoints(h.db.db, runId)).map((p) => [p.index, p.sent])).toEqual([
      [0, 3],
      [1, 2],
      [2, 4],
    ]);
    expect((await getRunMeter(h.db.db, runId))?.summary).toEqual(run.summary);
    await new Promise((r) => setTimeout(r, 200));
    // "running" may go out before the browser subscribed; the end never does.
    expect(
      statuses
        .filter((e) => e.runId === runId && e.type === "status")
        .map((e) => (e.type === "status" ? e.status : ""))
        .filter((s) => s !== "running"),
    ).toEqual(["passed"]);
    expect(new Map(points.flatMap((p) => p.points.map((pt) => [pt.index, pt.sent]))).get(2)).toBe(4);
    browser.close();
    await new Promise((r) => live.close(r));
    pub.disconnect();
    sub.disconnect();
  });

  it("fails a run whose threshold fails and says by how much", async () => {
    const a = await h.connect({ name: "agent-slow", pool: "slow" });
    const runId = await h.startRun(testPlan({ agents: { pool: "slow" }, thresholds: ["latency.p95 < 200ms"] }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    await a.nextStart();
    await a.sendFrame(testFrame(idsOf(a, job), 0, [250, 250, 250]));
    await a.end({ runId, shardId: job.shardId, status: "completed", frames: 1 });
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("failed");
    expect(run.reason).toMatch(/^latency\.p95 = 250(\.\d+)?ms, limit < 200ms \(off by 50(\.\d+)?ms\)$/);
  });

  it("splits a run over several agents and starts them at one instant", async () => {
    const [a1, a2] = [await h.connect({ name: "agent-m1", pool: "multi" }), await h.connect({ name: "agent-m2", pool: "multi" })];
    const runId = await h.startRun(testPlan({ agents: { pool: "multi", count: 2 }, connections: { count: 5 } }));
    const jobs = await Promise.all([a1, a2].map((a) => a.until((r) => r.assign.find((j) => j.runId === runId))));
    expect(jobs.map((j) => j.plan.connections.count).sort()).toEqual([2, 3]);
    const starts = await Promise.all([a1.nextStart(), a2.nextStart()]);
    expect(starts[0].startAt).toBe(starts[1].startAt);
    for (const [i, a] of [a1, a2].entries()) {
      await a.sendFrame(testFrame(idsOf(a, jobs[i]!), 0, [5], { startedAt: starts[i]!.startAt + i * 3 }));
      await a.end({ runId, shardId: jobs[i]!.shardId, status: "completed", frames: 1 });
    }
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("passed");
    expect(run.summary?.messages.sent).toBe(2);
    expect(run.startSkewMs).toBe(3);
  });

  it("gives a new run to an agent that connects while the pool's only other agent is busy", async () => {
    const a1 = await h.connect({ name: "agent-busy", pool: "busy" });
    const runA = await h.startRun(testPlan({ agents: { pool: "busy" }, duration: "60s" }));
    const jobA = await a1.until((r) => r.assign.find((j) => j.runId === runA));
    await a1.nextStart();
    const runB = await h.startRun(testPlan({ agents: { pool: "busy" } }));
    await new Promise((r) => setTimeout(r, 300));
    expect(a1.received.assign.some((j) => j.runId === runB)).toBe(false); // never two shards on one agent
    const a2 = await h.connect({ name: "agent-late", pool: "busy" });
    const jobB = await a2.until((r) => r.assign.find((j) => j.runId === runB), 1000, "shard.assign of the second run");
    await a2.nextStart();
    await a2.end({ runId: runB, shardId: jobB.shardId, status: "completed", frames: 0 });
    await a1.end({ runId: runA, shardId: jobA.shardId, status: "completed", frames: 0 });
    expect((await h.waitForFinal(runB)).status).toBe("passed");
    expect((await h.waitForFinal(runA)).status).toBe("passed");
  });

  it("coordinates a run across hub replicas: the agent on one, the run on either", async () => {
    const other = await startHub({
      databaseUrl: h.databaseUrl,
      redisUrl: h.redisUrl,
      agentToken: TEST_AGENT_TOKEN,
      port: 0,
      log: pino({ level: "silent" }),
      shutdownGraceMs: 1000,
    });
    try {
      const a = await h.connect({ hubUrl: `http://127.0.0.1:${other.port}`, name: "agent-replica", pool: "replica" });
      const runIds = [await h.startRun(testPlan({ agents: { pool: "replica" } })), await h.startRun(testPlan({ agents: { pool: "replica" } }))];
      for (const runId of runIds) {
        const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
        await a.until((r) => r.start.find((s) => s.shardId === job.shardId));
        await a.sendFrame(testFrame(idsOf(a, job), 0, [3]));
        await a.end({ runId, shardId: job.shardId, status: "completed", frames: 1 });
        const run = await h.waitForFinal(runId);
        expect(run.status).toBe("passed");
        expect(run.summary?.messages.sent).toBe(1);
      }
    } finally {
      await other.close();
    }
  });

  it("errors a run with the agent's own reason when a shard cannot arm", async () => {
    const a = await h.connect({ name: "agent-refused", pool: "refused" });
    a.armReply = { ok: false, error: "connect refused: ECONNREFUSED 127.0.0.1:9" };
    const runId = await h.startRun(testPlan({ agents: { pool: "refused" } }));
    const run = await h.waitForFinal(runId);
    expect(run).toMatchObject({ status: "errored", reason: "connect refused: ECONNREFUSED 127.0.0.1:9" });
    const [shard] = await listShards(h.db.db, runId);
    expect(shard?.status).toBe("errored");
  });

  it("errors a run whose pool has no agent, with a clear reason, within the arming timeout", async () => {
    const t0 = Date.now();
    const runId = await h.startRun(testPlan({ agents: { pool: "nobody" } }));
    const run = await h.waitForFinal(runId, 10_000);
    expect(run.status).toBe("errored");
    expect(run.reason).toBe("plan asks for 1 agent; pool 'nobody' has 0 connected (waited 1.5 s for more to connect)");
    expect(Date.now() - t0).toBeLessThan(5000);
    // It never left the pool's line: no shard was planned.
    expect(await listShards(h.db.db, runId)).toEqual([]);
  });

  it("errors a run whose agent is lost, naming the agent and keeping its frames", async () => {
    const a = await h.connect({ name: "agent-lost", pool: "lost" });
    const runId = await h.startRun(testPlan({ agents: { pool: "lost" } }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    await a.nextStart();
    expect(await a.sendFrame(testFrame(idsOf(a, job), 0, [10]))).toEqual({ ok: true });
    expect(await a.sendFrame(testFrame(idsOf(a, job), 1, [11]))).toEqual({ ok: true });
    a.close(); // and never comes back
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("errored");
    expect(run.reason).toMatch(new RegExp(`^agent agent-lost \\(${a.agentId}\\) lost: disconnected \\(.+\\) and did not reconnect within 0.5 s$`));
    expect(await listFrames(h.db.db, runId)).toHaveLength(2);
    expect(run.summary?.messages.sent).toBe(2);
    const [shard] = await listShards(h.db.db, runId);
    expect(shard).toMatchObject({ status: "errored", error: run.reason });
  });

  it("lets an agent reconnect within the grace period and finish its shard", async () => {
    const hello = { name: "agent-flaky", pool: "flaky", instanceId: "flaky-instance-1" };
    const a = await h.connect(hello);
    const runId = await h.startRun(testPlan({ agents: { pool: "flaky" } }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    await a.nextStart();
    a.close();
    const back = await h.connect(hello);
    expect(back.agentId).toBe(a.agentId);
    expect(await back.sendFrame(testFrame(idsOf(back, job), 0, [7]))).toEqual({ ok: true });
    expect(await back.end({ runId, shardId: job.shardId, status: "completed", frames: 1 })).toEqual({ ok: true });
    expect((await h.waitForFinal(runId)).status).toBe("passed");
  });

  it("aborts a running run: shard.abort reaches the agent within a second, the run ends aborted", async () => {
    const a = await h.connect({ name: "agent-abort", pool: "abort" });
    const runId = await h.startRun(testPlan({ agents: { pool: "abort" }, duration: "60s" }));
    const job = await a.until((r) => r.assign.find((j) => j.runId === runId));
    await a.nextStart();
    await a.sendFrame(testFrame(idsOf(a, job), 0, [10]));
    const sentAt = Date.now();
    await h.redis.publish(REDIS_KEYS.abort, JSON.stringify({ runId, reason: "stopped from the test" }));
    const abort = await a.nextAbort(2000);
    expect(abort).toMatchObject({ shardId: job.shardId, reason: "stopped from the test" });
    expect(abort.receivedAt - sentAt).toBeLessThan(1000);
    await a.end({ runId, shardId: job.shardId, status: "aborted", frames: 1 });
    const run = await h.waitForFinal(runId);
    expect(run).toMatchObject({ status: "aborted", reason: "stopped from the test" });
    expect(await listFrames(h.db.db, runId)).toHaveLength(1);
  });

  it("runs a flow over two agents: each its own data rows and connection index, the summary with setup steps, events and samples", async () => {
    const [a1, a2] = [await h.connect({ name: "agent-f1", pool: "flow" }), await h.connect({ name: "agent-f2", pool: "flow" })];
    const users = ["ann", "bob", "cid", "dee", "eve"];
    const base = testPlan({ agents: { pool: "flow", count: 2 }, connections: { count: 5 }, thresholds: ["messages.unmatched < 100", "setup.failed == 0"] });
    const plan = planSchema.parse({
      ...base,
      target: { url: "ws://127.0.0.1:9/rpc", protocol: "ws" },
      flow: {
        data: { csv: `user\n${users.join("\n")}` },
        setup: [{ request: { name: "login", method: "POST", url: "/login", json: { user: "{{ data.user }}" } } }],
        messages: [{ json: { id: "{{ msg.id }}" }, reply: { match: { path: "$.id", equals: "{{ msg.id }}" } } }],
      },
    });
    const runId = await h.startRun(plan);
    const jobs = await Promise.all([a1, a2].map((a) => a.until((r) => r.assign.find((j) => j.runId === runId))));
    // Each agent's connections get their own rows: conn.index k (indexBase + id) gets row k, none twice.
    const picked = jobs.flatMap((j) => {
      const rows = flowRows(j.plan.flow!.data);
      return Array.from({ length: j.plan.connections.count }, (_, id) => rows[(j.plan.flow!.indexBase! + id) % rows.length]!.user);
    });
    expect(picked.sort()).toEqual(users);
    expect(jobs.map((j) => [j.index, j.plan.connections.count, j.plan.flow!.indexBase]).sort()).toEqual([
      [0, 3, 0],
      [1, 2, 3],
    ]);
    const starts = await Promise.all([a1.nextStart(), a2.nextStart()]);
    for (const [i, a] of [a1, a2].entries()) {
      const frame = testFrame(idsOf(a, jobs[i]!), 0, [5, 6], { startedAt: starts[i]!.startAt });
      const r = new IntervalRecorder();
      for (let c = 0; c < jobs[i]!.plan.connections.count; c++) r.recordMicros("setup.login", (20 + c) * 1000);
      r.increment("events.message", 2);
      r.increment("events.presence", 30);
      r.increment("unmatched.presence", 30);
      r.increment(COUNTERS.unmatched, 30);
      const flow = r.take();
      const samples = Array.from({ length: 15 }, (_, k) => ({ event: "presence", data: JSON.stringify({ agent: i, k }) }));
      await a.sendFrame({ ...frame, counters: { ...frame.counters, ...flow.counters }, histograms: { ...frame.histograms, ...flow.histograms }, samples });
      await a.end({ runId, shardId: jobs[i]!.shardId, status: "completed", frames: 1 });
    }
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("passed");
    const flow = run.summary!.flow!;
    expect(flow.setup).toMatchObject([{ step: "login", count: 5, failed: 0 }]);
    expect(flow.events).toEqual([
      { event: "presence", received: 60, unmatched: 60 },
      { event: "message", received: 4, unmatched: 0 },
    ]);
    expect(flow.unmatched).toBe(60);
    // 30 samples sent, 20 per event kept (the hub stores no more, the summary shows no more).
    expect(flow.samples).toHaveLength(20);
    expect(run.summary!.thresholds.map((t) => [t.expression, t.ok])).toEqual([
      ["messages.unmatched < 100", true],
      ["setup.failed == 0", true],
    ]);
  });

  it("aborts a queued run right away", async () => {
    // No agent in this pool, so the run sits arming; the abort must not wait for the arming timeout.
    const runId = await h.startRun(testPlan({ agents: { pool: "abort-early" } }));
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    await h.redis.publish(REDIS_KEYS.abort, JSON.stringify({ runId, reason: "changed my mind" }));
    const run = await h.waitForFinal(runId, 5000);
    expect(run).toMatchObject({ status: "aborted", reason: "changed my mind" });
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
