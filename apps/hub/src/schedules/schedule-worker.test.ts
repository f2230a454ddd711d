import { Queue } from "bullmq";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { DEFAULT_ORG_ID, getPlanSchedule, insertPlan, schema, upsertPlanSchedule } from "@volley/db";
import { nextPlanFiring, planSchedulerId, QUEUE_NAMES, removePlanScheduler, upsertPlanScheduler } from "@volley/queue";
import { useHubHarness } from "../test-support/use-hub-harness";

// A plan's job scheduler (BullMQ upsertJobScheduler, every second here) fires, and a real hub's
// schedule worker turns each firing into a queued run of the plan: a run row naming the schedule,
// its runJob on the runs queue, and the schedule's last run. Real PostgreSQL and Redis; bounded to
// a few seconds and a few firings.

const doc = planSchema.parse({
  name: "nightly echo",
  target: { url: "ws://127.0.0.1:9001/echo" },
  connections: { count: 1 },
  scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
});
const h = useHubHarness();
let schedules: Queue;
let runs: Queue;

beforeAll(() => {
  schedules = new Queue(QUEUE_NAMES.schedules, { connection: h.redis });
  runs = new Queue(QUEUE_NAMES.runs, { connection: h.redis });
});

afterAll(async () => {
  await schedules?.close();
  await runs?.close();
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
    const plan = await insertPlan(h.db.db, { orgId: DEFAULT_ORG_ID, document: doc });
    // The API refuses schedules firing more than once a minute; the scheduler itself takes any cron.
    const row = await upsertPlanSchedule(h.db.db, {
      orgId: DEFAULT_ORG_ID,
      planId: plan.id,
      cron: "* * * * * *",
      timezone: "UTC",
      enabled: true,
      createdBy: null,
    });
    const next = await upsertPlanScheduler(schedules, { id: row.id, planId: plan.id, orgId: DEFAULT_ORG_ID, cron: row.cron, timezone: row.timezone });
    expect(next).toBeGreaterThan(Date.now() - 1000);
    expect(next).toBeLessThanOrEqual(Date.now() + 1500);

    const started = await until("two scheduled runs", async () => {
      const rows = await h.db.db.select().from(schema.runs).where(eq(schema.runs.planId, plan.id));
      return rows.length >= 2 ? rows : null;
    });
    expect(await removePlanScheduler(schedules, plan.id)).toBe(true);
    for (const run of started) {
      // No agent is connected: the hub's run worker holds it in the pool's line, queued.
      expect(run).toMatchObject({ orgId: DEFAULT_ORG_ID, scheduleId: row.id, name: "nightly echo", status: "queued" });
      // Queued for the hubs' run worker, under the run's id (so queueing it twice would be a no-op).
      const job = await runs.getJob(run.id);
      expect(job?.data).toEqual({ runId: run.id });
    }
    const audit = await h.db.db.select().from(schema.auditEvents).where(eq(schema.auditEvents.action, "run.scheduled"));
    expect(audit.map((a) => a.runId).sort()).toEqual(expect.arrayContaining(started.map((r) => r.id).sort()));
    expect(audit[0]).toMatchObject({ actor: `schedule:${row.id}`, targetHost: "127.0.0.1" });
    const after = await getPlanSchedule(h.db.db, DEFAULT_ORG_ID, plan.id);
    expect(started.map((r) => r.id)).toContain(after!.lastRunId);
    expect(after!.lastRunAt).not.toBeNull();
    expect(after!.lastError).toBeNull();
    expect(await nextPlanFiring(schedules, plan.id)).toBeNull();
  });

  it("a firing whose schedule was disabled or deleted starts nothing and removes its job scheduler", async () => {
    const plan = await insertPlan(h.db.db, { orgId: DEFAULT_ORG_ID, document: { ...doc, name: "paused" } });
    const row = await upsertPlanSchedule(h.db.db, {
      orgId: DEFAULT_ORG_ID,
      planId: plan.id,
      cron: "* * * * * *",
      timezone: "UTC",
      enabled: false,
      createdBy: null,
    });
    // A scheduler left behind (web removes it when disabling; a crash between the two would leave it).
    await upsertPlanScheduler(schedules, { id: row.id, planId: plan.id, orgId: DEFAULT_ORG_ID, cron: row.cron, timezone: row.timezone });
    // Removed: BullMQ no longer plans a next firing (its job scheduler record has no pattern and no next).
    await until("the stale job scheduler removed", async () => (await nextPlanFiring(schedules, plan.id)) === null);
    expect((await schedules.getJobScheduler(planSchedulerId(plan.id)))?.pattern ?? null).toBeNull();
    expect(await h.db.db.select().from(schema.runs).where(eq(schema.runs.planId, plan.id))).toEqual([]);
  });
});
