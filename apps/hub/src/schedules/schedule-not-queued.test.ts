import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { DEFAULT_QUOTAS } from "@volley/admission";
import { planSchema } from "@volley/contracts";
import { createDb, createTestDatabase, DEFAULT_ORG_ID, getPlanSchedule, getRunOfAnyOrg, insertPlan, upsertPlanSchedule, type DbHandle } from "@volley/db";
import { freePort, startLocalRedis, type RunningRedis } from "@volley/devstack";
import { createRedis, enqueue, openQueue, QUEUE_NAMES, scheduledRunJob } from "@volley/queue";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { ScheduleWorker } from "./schedule-worker";

// A schedule fires but its run cannot be put on the runs queue: that Redis refuses writes (full,
// `maxmemory` reached with noeviction, as BullMQ wants it), a real redis-server of this test's own.
// The run row must end `errored` with a plain reason (no job will ever run it), not sit `queued`
// forever, and the schedule must say so. The schedules queue lives on a second, healthy redis-server.

const doc = planSchema.parse({
  name: "nightly echo",
  target: { url: "ws://127.0.0.1:9001/echo" },
  connections: { count: 1 },
  scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
});

let dir: string;
let healthy: RunningRedis;
let full: RunningRedis;
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;
let connection: Redis;
let fullConnection: Redis;
let schedules: Queue;
let runs: Queue;
let worker: ScheduleWorker;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "volley-schedule-not-queued-"));
  healthy = await startLocalRedis({ dir: path.join(dir, "healthy"), port: await freePort(), persist: false });
  full = await startLocalRedis({ dir: path.join(dir, "full"), port: await freePort(), persist: false });
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  h = createDb(testDb.url, 2);
  connection = createRedis(healthy.url);
  fullConnection = createRedis(full.url);
  schedules = openQueue(QUEUE_NAMES.schedules, connection);
  runs = openQueue(QUEUE_NAMES.runs, fullConnection);
  await runs.waitUntilReady();
  await fullConnection.config("SET", "maxmemory-policy", "noeviction");
  await fullConnection.config("SET", "maxmemory", "1");
  const policy = { mode: "self-hosted" as const, allowlist: [], quotas: DEFAULT_QUOTAS };
  worker = new ScheduleWorker({ db: h.db, connection, runs, schedules, log: pino({ level: "silent" }), policy });
  worker.start();
});

afterAll(async () => {
  await worker?.close(true);
  await Promise.all([schedules?.close(), runs?.close()]);
  connection?.disconnect();
  fullConnection?.disconnect();
  await h?.close();
  await testDb?.drop();
  await Promise.all([healthy?.stop(), full?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("a scheduled run that cannot be queued", () => {
  it("ends errored with a plain reason, and the schedule names the run and what to do", async () => {
    const plan = await insertPlan(h.db, { orgId: DEFAULT_ORG_ID, document: doc });
    const row = await upsertPlanSchedule(h.db, { orgId: DEFAULT_ORG_ID, planId: plan.id, cron: "0 3 * * *", timezone: "UTC", enabled: true, createdBy: null });
    await enqueue(schedules, scheduledRunJob, { scheduleId: row.id, planId: plan.id, orgId: DEFAULT_ORG_ID });

    const deadline = Date.now() + 15_000;
    let schedule = await getPlanSchedule(h.db, DEFAULT_ORG_ID, plan.id);
    while (!schedule?.lastError && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      schedule = await getPlanSchedule(h.db, DEFAULT_ORG_ID, plan.id);
    }
    expect(schedule?.lastError).toMatch(/^run run_\w+ could not be queued: the queue \(Redis\) did not answer; .*REDIS_URL/);
    const runId = /^run (run_\w+) /.exec(schedule!.lastError!)![1]!;
    const run = await getRunOfAnyOrg(h.db, runId);
    expect(run).toMatchObject({ status: "errored", scheduleId: row.id });
    expect(run!.reason).toMatch(/^could not be queued: the queue \(Redis\) did not answer; .*start the plan by hand/);
    // Redis's own words ("OOM command not allowed …") go to the log, not to the user.
    expect(`${run!.reason} ${schedule!.lastError}`).not.toMatch(/OOM|maxmemory/);
    expect(await runs.getJobCounts()).toMatchObject({ waiting: 0 });
  }, 30_000);
});
