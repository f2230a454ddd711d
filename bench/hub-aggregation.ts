/**
 * The hub's cost of aggregating frames: a real hub process (pinned to core 0) runs one plan split
 * over 100 agents, each sending one frame per second, as real agents do, over the agent gateway
 * (Socket.IO) — frames acknowledged once in the run's Redis stream, merged and stored in
 * PostgreSQL by the aggregator. The 100 agents are Socket.IO clients in this process (core 1)
 * speaking the agent protocol, with frames carrying real HdrHistograms (a few thousand latency
 * samples per second each). Measured: the hub process's CPU (utime + stime from /proc) over the
 * steady middle of the run, as a share of one core; and that every frame was stored exactly once.
 *
 * Usage: node --import tsx bench/hub-aggregation.ts [runs=3] [agents=100] [seconds=30]
 * Needs a PostgreSQL server (VOLLEY_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 * and `redis-server` on PATH (a private one is started on a free port).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { AGENT_EVENTS, AGENT_NAMESPACE, parsePlanDocument, type ShardJob, type ShardStart } from "@volley/contracts";
import { createDb, createTestDatabase, getRun, insertRun, listFrames } from "@volley/db";
import { IntervalRecorder } from "@volley/metrics";
import { createRedis, enqueue, openQueue, QUEUE_NAMES, runJob } from "@volley/queue";
import { io, type Socket } from "socket.io-client";
import { spawnPinned } from "./lib/spawn-pinned";

const RUNS = Math.min(9, Math.max(1, Number(process.argv[2] ?? 3)));
const AGENTS = Math.max(1, Number(process.argv[3] ?? 100));
const SECONDS = Math.max(10, Number(process.argv[4] ?? 30));
const TOKEN = "bench-agent-token";
const SERVER_URL = process.env.VOLLEY_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const TICKS = 100; // USER_HZ, 100 on Linux

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

function cpuSeconds(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { user: Number(fields[11]) / TICKS, system: Number(fields[12]) / TICKS }; // utime, stime
}

const HEALTH = { cpu: 20, eventLoopDelayMs: { p50: 0.5, max: 3 }, rssMb: 120, sendLagMaxMs: 2, saturated: false };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One frame's worth of measurements, as an engine with ~2,000 round trips per second records them. */
function realisticFrame(rec: IntervalRecorder, first: boolean) {
  for (let i = 0; i < 2000; i++) {
    rec.recordMicros("message.latency", 800 + Math.floor(Math.random() ** 3 * 40_000));
    rec.recordMicros("message.send_lag", Math.floor(Math.random() ** 4 * 2_000));
    rec.increment("messages.sent");
    rec.increment("messages.received");
  }
  if (first) {
    rec.recordMicros("connect", 1500);
    rec.increment("connections.opened");
  }
  rec.setGauge("connections.active", 1);
  return rec.take();
}

interface FakeAgent {
  socket: Socket;
  agentId: string;
  job?: ShardJob;
  sent: number;
  acked: number;
}

async function connectAgent(hubUrl: string, i: number): Promise<FakeAgent> {
  const socket = io(`${hubUrl}${AGENT_NAMESPACE}`, {
    auth: {
      token: TOKEN,
      instanceId: `bench-${i}-${process.pid}`,
      name: `bench-agent-${i}`,
      version: "bench",
      pool: "default",
      labels: {},
      capacity: { cores: 1, memoryMb: 1024, maxConnections: 10_000, sourceAddresses: [] },
    },
    transports: ["websocket"],
    reconnection: false,
  });
  const agent: FakeAgent = { socket, agentId: "", sent: 0, acked: 0 };
  await new Promise<void>((resolve, reject) => {
    socket.once(AGENT_EVENTS.welcome, (w: { agentId: string }) => {
      agent.agentId = w.agentId;
      resolve();
    });
    socket.once("connect_error", reject);
  });
  socket.on(AGENT_EVENTS.shardAssign, (job: ShardJob, ack: (a: unknown) => void) => {
    agent.job = job;
    ack({ ok: true });
  });
  socket.on(AGENT_EVENTS.shardStart, (s: ShardStart) => void runShard(agent, s));
  const beat = setInterval(() => socket.emit(AGENT_EVENTS.heartbeat, { busy: agent.job !== undefined, health: HEALTH }, () => {}), 5000);
  socket.on("disconnect", () => clearInterval(beat));
  return agent;
}

async function runShard(agent: FakeAgent, start: ShardStart) {
  const job = agent.job!;
  const rec = new IntervalRecorder();
  await sleep(Math.max(0, start.startAt - Date.now()));
  for (let index = 0; index < SECONDS; index++) {
    // Recorded ahead of its instant: real agents (each on its own machine) all send at the interval's
    // end, so the hub gets a second's frames in one burst. Recording here at the instant would
    // serialize 100 agents' encoding in this one process and spread the frames over ~0.5 s.
    const { counters, histograms } = realisticFrame(rec, index === 0);
    await sleep(Math.max(0, start.startAt + (index + 1) * 1000 - Date.now()));
    const frame = {
      runId: job.runId,
      shardId: job.shardId,
      agentId: agent.agentId,
      seq: index,
      index,
      startedAt: start.startAt + index * 1000,
      durationMs: 1000,
      warmup: false,
      counters,
      histograms,
      health: HEALTH,
    };
    agent.sent++;
    agent.socket.emit(AGENT_EVENTS.frame, frame, (a: { ok: boolean; error?: string }) => {
      if (a?.ok) agent.acked++;
      else if (!agent.acked) process.stderr.write(`frame refused: ${a?.error}\n`);
    });
  }
  await sleep(2000);
  agent.socket.emit(AGENT_EVENTS.shardEnd, { runId: job.runId, shardId: job.shardId, status: "completed", frames: SECONDS }, () => {});
}

async function once(run: number) {
  const testDb = await createTestDatabase(SERVER_URL);
  const handle = createDb(testDb.url, 2);
  const db = {
    url: testDb.url,
    db: handle.db,
    drop: async () => {
      await handle.close();
      await testDb.drop();
    },
  };
  const redisPort = await freePort();
  const redis = spawn("redis-server", ["--port", String(redisPort), "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  await sleep(300);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const hubPort = await freePort();
  const hub = spawnPinned(
    0,
    [
      process.execPath,
      ...(process.env.BENCH_HUB_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_HUB_PROF}`] : []),
      ...(process.env.BENCH_HUB_NODE_FLAGS ? process.env.BENCH_HUB_NODE_FLAGS.split(" ") : []),
      "--import",
      "tsx",
      "apps/hub/src/main.ts",
    ],
    {
      env: { ...process.env, DATABASE_URL: db.url, REDIS_URL: redisUrl, HUB_PORT: String(hubPort), AGENT_TOKEN: TOKEN, LOG_LEVEL: "warn" },
      limitMs: (SECONDS + 120) * 1000,
    },
  );
  const conn = createRedis(redisUrl);
  try {
    const hubUrl = `http://127.0.0.1:${hubPort}`;
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`${hubUrl}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await sleep(200);
    }
    const agents: FakeAgent[] = [];
    for (let i = 0; i < AGENTS; i++) agents.push(await connectAgent(hubUrl, i));

    const parsed = parsePlanDocument(
      JSON.stringify({
        name: "aggregation bench",
        target: { url: "ws://127.0.0.1:9/echo" },
        connections: { count: AGENTS, rate: 1000 },
        scenario: { kind: "echo", message: { rate: 1 }, duration: `${SECONDS}s` },
        agents: { count: AGENTS },
      }),
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const row = await insertRun(db.db, { plan: parsed.plan });
    const queue = openQueue(QUEUE_NAMES.runs, conn);
    await enqueue(queue, runJob, { runId: row.id }, { jobId: row.id });

    while (!agents.every((a) => a.sent > 0)) await sleep(50);
    // Steady state: skip the first 3 s (dispatch, first frames) and stop 2 s before the last frame.
    await sleep(3000);
    const c0 = cpuSeconds(hub.child.pid!),
      t0 = performance.now();
    await sleep((SECONDS - 5) * 1000);
    const c1 = cpuSeconds(hub.child.pid!),
      t1 = performance.now();
    const wall = (t1 - t0) / 1000;
    const share = (c1.user + c1.system - c0.user - c0.system) / wall;
    const split = { user: Number(((c1.user - c0.user) / wall).toFixed(4)), system: Number(((c1.system - c0.system) / wall).toFixed(4)) };

    let status = "";
    for (let i = 0; i < 200; i++) {
      const final = (await getRun(db.db, row.id))!;
      status = final.status;
      if (!["queued", "running"].includes(status)) {
        // A figure from a run that did not pass is suspect: say why it ended.
        if (final.reason) status = `${status}: ${final.reason}`;
        break;
      }
      await sleep(250);
    }
    const stored = (await listFrames(db.db, row.id)).length;
    const sent = agents.reduce((n, a) => n + a.sent, 0);
    const acked = agents.reduce((n, a) => n + a.acked, 0);
    await queue.close();
    for (const a of agents) a.socket.close();
    const result = { run, agents: AGENTS, framesPerSecond: AGENTS, hubCpuShareOfOneCore: Number(share.toFixed(4)), ...split, sent, acked, stored, status };
    process.stderr.write(`${JSON.stringify(result)}\n`);
    return result;
  } finally {
    conn.disconnect();
    hub.kill();
    await hub.exited;
    redis.kill();
    await db.drop().catch(() => {});
  }
}

const results = [];
for (let r = 1; r <= RUNS; r++) results.push(await once(r));
const shares = results.map((r) => r.hubCpuShareOfOneCore).sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ median: shares[Math.floor(shares.length / 2)], results }, null, 2)}\n`);
process.exit(0);
