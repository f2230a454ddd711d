import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { planSchema, type Plan } from "@volley/contracts";
import { DEFAULT_ORG_ID, getPlanSchedule, insertRun, schema } from "@volley/db";
import { removePlanScheduler } from "@volley/queue";
import { usePlanSchedules } from "../test-support/plan-schedules";
import { until } from "../test-support/until";
import { useHubHarness } from "../test-support/use-hub-harness";

// A schedule's firing is admitted as a run queued through the API is (@volley/admission): in
// hosted mode the target must be public and the org's own (proof re-checked), and the quotas must
// hold with the runs going at that moment. Saving the schedule checked them once; each firing
// checks again, and a refused firing starts no run and says why on the schedule (what the plan's
// schedule panel shows as the last firing). A hosted hub with a 100-connection quota; real
// PostgreSQL and Redis, BullMQ's job scheduler firing every second.

const h = useHubHarness({ mode: "hosted", targetPolicy: { quotas: { connections: 100, messagesPerSecond: 50_000, durationSeconds: 1800 } } });
const schedules = usePlanSchedules(h);

const doc = (name: string, url: string, connections: number): Plan =>
  planSchema.parse({ name, target: { url }, connections: { count: connections }, scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" } });

/** Schedules the plan every second, waits for a firing's outcome, stops the schedule; returns the schedule row and the plan's runs. */
async function fireOnce(plan: Plan) {
  const { plan: saved } = await schedules.everySecond(plan);
  const after = await until(
    "the schedule's first firing",
    async () => {
      const row = await getPlanSchedule(h.db.db, DEFAULT_ORG_ID, saved.id);
      return row?.lastRunAt ? row : null;
    },
    10_000,
  );
  await removePlanScheduler(schedules.queue, saved.id);
  const runs = await h.db.db.select().from(schema.runs).where(eq(schema.runs.planId, saved.id));
  return { schedule: after, runs };
}

describe("a schedule's firing (hosted)", () => {
  it("starts no run against a target hosted mode refuses, and says why on the schedule", async () => {
    const { schedule, runs } = await fireOnce(doc("private target", "ws://127.0.0.1:9001/echo", 1));
    expect(runs).toEqual([]);
    expect(schedule.lastRunId).toBeNull();
    expect(schedule.lastError).toMatch(/127\.0\.0\.1 \(loopback\)/);
  });

  it("starts no run against a public host the org has not verified", async () => {
    const { schedule, runs } = await fireOnce(doc("unverified", "ws://93.184.215.14/echo", 1));
    expect(runs).toEqual([]);
    expect(schedule.lastError).toMatch(/93\.184\.215\.14 is not a verified target of this organization/);
  });

  it("starts no run over the org's quotas, counting the runs already going when it fires", async () => {
    const big = await fireOnce(doc("too big", "ws://93.184.215.14/echo", 500));
    expect(big.runs).toEqual([]);
    expect(big.schedule.lastError).toMatch(/exceeds this organization's quotas: 500 connections > 100/);

    // 40 connections fit alone (saving the schedule would have passed); with 80 already queued they do not.
    await insertRun(h.db.db, { plan: doc("already queued", "ws://93.184.215.14/echo", 80), orgId: DEFAULT_ORG_ID });
    const busy = await fireOnce(doc("while busy", "ws://93.184.215.14/echo", 40));
    expect(busy.runs).toEqual([]);
    expect(busy.schedule.lastError).toMatch(/120 connections with the 1 run already queued or running > 100/);
    const audit = await h.db.db.select().from(schema.auditEvents).where(eq(schema.auditEvents.action, "run.scheduled"));
    expect(audit).toEqual([]);
  });
});
