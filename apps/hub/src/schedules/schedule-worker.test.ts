import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { DEFAULT_ORG_ID, getPlanSchedule, schema } from "@volley/db";
import { nextPlanFiring, planSchedulerId, removePlanScheduler } from "@volley/queue";
import { usePlanSchedules } from "../test-support/plan-schedules";
import { until } from "../test-support/until";
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
const schedules = usePlanSchedules(h);

describe("scheduled runs", () => {
  it("each firing of the plan's job scheduler queues a run of the plan's latest version", async () => {
    const { plan, schedule: row, next } = await schedules.everySecond(doc);
    expect(next).toBeGreaterThan(Date.now() - 1000);
    expect(next).toBeLessThanOrEqual(Date.now() + 1500);

    const started = await until(
      "two scheduled runs",
      async () => {
        const rows = await h.db.db.select().from(schema.runs).where(eq(schema.runs.planId, plan.id));
        return rows.length >= 2 ? rows : null;
      },
      8000,
    );
    expect(await removePlanScheduler(schedules.queue, plan.id)).toBe(true);
    for (const run of started) {
      // No agent is connected: the hub's run worker holds it in the pool's line, queued.
      expect(run).toMatchObject({ orgId: DEFAULT_ORG_ID, scheduleId: row.id, name: "nightly echo", status: "queued", planVersion: plan.version });
      // Queued for the hubs' run worker, under the run's id (so queueing it twice would be a no-op).
      const job = await h.runs.getJob(run.id);
      expect(job?.data).toEqual({ runId: run.id });
    }
    const audit = await h.db.db.select().from(schema.auditEvents).where(eq(schema.auditEvents.action, "run.scheduled"));
    expect(audit.map((a) => a.runId).sort()).toEqual(expect.arrayContaining(started.map((r) => r.id).sort()));
    expect(audit[0]).toMatchObject({ actor: `schedule:${row.id}`, targetHost: "127.0.0.1" });
    const after = await getPlanSchedule(h.db.db, DEFAULT_ORG_ID, plan.id);
    expect(started.map((r) => r.id)).toContain(after!.lastRunId);
    expect(after!.lastRunAt).not.toBeNull();
    expect(after!.lastError).toBeNull();
    expect(await nextPlanFiring(schedules.queue, plan.id)).toBeNull();
  });

  it("a firing whose schedule was disabled or deleted starts nothing and removes its job scheduler", async () => {
    // A scheduler left behind (web removes it when disabling; a crash between the two would leave it).
    const { plan } = await schedules.everySecond({ ...doc, name: "paused" }, { enabled: false });
    // Removed: BullMQ no longer plans a next firing (its job scheduler record has no pattern and no next).
    await until("the stale job scheduler removed", async () => (await nextPlanFiring(schedules.queue, plan.id)) === null, 8000);
    expect((await schedules.queue.getJobScheduler(planSchedulerId(plan.id)))?.pattern ?? null).toBeNull();
    expect(await h.db.db.select().from(schema.runs).where(eq(schema.runs.planId, plan.id))).toEqual([]);
  });
});
