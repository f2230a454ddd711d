import { Queue } from "bullmq";
import { eq } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import "@volley/devstack/vitest-context";
import { planSchema } from "@volley/contracts";
import { createDb, createTestDatabase, DEFAULT_ORG_ID, getPlanSchedule, insertPlan, schema, upsertPlanSchedule, type DbHandle } from "@volley/db";
import { createRedis, nextPlanFiring, planSchedulerId, QUEUE_NAMES, removePlanScheduler, upsertPlanScheduler } from "@volley/queue";
import type { Redis } from "ioredis";
import { redisDbUrl } from "../test-support/hub-harness";
import { startScheduleWorker } from "./schedule-worker";

// A plan's job scheduler (BullMQ upsertJobScheduler, every second here) fires, and the schedule
// worker turns each firing into a queued run of the plan: a run row naming the schedule, its
// runJob on the runs queue, and the schedule's last run. Real PostgreSQL and Redis; bounded to a
// few seconds and a few firings.

let db: DbHandle;
let redis: Redis;
let schedules: Queue;
let runs: Queue;
let drop: () => Promise<void>;
let worker: { close(force?: boolean): Promise<void> };

const doc = planSchema.parse({ name: "nightly echo", target: { url: "ws://127.0.0.1:9001/echo" }, connections: { count: 1 }, scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" } });

beforeAll(async () => {
  const testDb = await createTestDatabase(inject("databaseServerUrl"));
  drop = testDb.drop;
  db = createDb(testDb.url, 2);
  redis = createRedis(redisDbUrl(inject("redisUrl"), 9));
  await redis.flushdb();
  schedules = new Queue(QUEUE_NAMES.schedules, { connection: redis });
  runs = new Queue(QUEUE_NAMES.runs, { connection: redis });
  worker = startScheduleWorker({ db: db.db, connection: redis, log: pino({ level: "silent" }) });
});

afterAll(async () => {
  await worker?.close(true);
  await schedules?.close();
  await runs?.close();
  redis?.disconnect();
  await db?.close();
  await drop?.();
});

async function until<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("scheduled runs", () => {
  it("each firing of the plan's job scheduler queues a run of the plan's latest version", async () => {
    const plan = await insertPlan(db.db, { orgId: DEFAULT_ORG_ID, document: doc });
    // The API refuses schedules firing more than once a minute; the scheduler itself takes any cron.
    const row = await upsertPlanSchedule(db.db, { orgId: DEFAULT_ORG_ID, planId: plan.id, cron: "* * * * * *", timezone: "UTC", enabled: true, createdBy: null });
    const next = await upsertPlanScheduler(schedules, { id: row.id, planId: plan.id, orgId: DEFAULT_ORG_ID, cron: row.cron, timezone: row.timezone });
    expect(next).toBeGreaterThan(Date.now() - 1000);
    expect(next).toBeLessThanOrEqual(Date.now() + 1500);

    const started = await until("two scheduled runs", async () => {
      const rows = await db.db.select().from(schema.runs).where(eq(schema.runs.planId, plan.id));
      return rows.length >= 2 ? rows : null;
    });
    expect(await removePlanScheduler(schedules, plan.id)).toBe(true);
    for (const run of started) {
      expect(run).toMatchObject({ orgId: DEFAULT_ORG_ID, scheduleId: row.id, name: "nightly echo", status: "queued" });
      // Queued for a hub's run worker, under the run's id (so queueing it twice would be a no-op).
      const job = await runs.getJob(run.id);
      expect(job?.data).toEqual({ runId: run.id });
    }
    const audit = await db.db.select().from(schema.auditEvents).where(eq(schema.auditEvents.action, "run.scheduled"));
    expect(audit.map((a) => a.runId).sort()).toEqual(expect.arrayContaining(started.map((r) => r.id).sort()));
    expect(audit[0]).toMatchObject({ actor: `schedule:${row.id}`, targetHost: "127.0.0.1" });
    const after = await getPlanSchedule(db.db, DEFAULT_ORG_ID, plan.id);
    expect(started.map((r) => r.id)).toContain(after!.lastRunId);
    expect(after!.lastRunAt).not.toBeNull();
    expect(after!.lastError).toBeNull();
    expect(await nextPlanFiring(schedules, plan.id)).toBeNull();
  });

  it("a firing whose schedule was disabled or deleted starts nothing and removes its job scheduler", async () => {
    const plan = await insertPlan(db.db, { orgId: DEFAULT_ORG_ID, document: { ...doc, name: "paused" } });
    const row = await upsertPlanSchedule(db.db, { orgId: DEFAULT_ORG_ID, planId: plan.id, cron: "* * * * * *", timezone: "UTC", enabled: false, createdBy: null });
    // A scheduler left behind (web removes it when disabling; a crash between the two would leave it).
    await upsertPlanScheduler(schedules, { id: row.id, planId: plan.id, orgId: DEFAULT_ORG_ID, cron: row.cron, timezone: row.timezone });
    // Removed: BullMQ no longer plans a next firing (its job scheduler record has no pattern and no next).
    await until("the stale job scheduler removed", async () => (await nextPlanFiring(schedules, plan.id)) === null);
    expect((await schedules.getJobScheduler(planSchedulerId(plan.id)))?.pattern ?? null).toBeNull();
    expect(await db.db.select().from(schema.runs).where(eq(schema.runs.planId, plan.id))).toEqual([]);
  });
});
