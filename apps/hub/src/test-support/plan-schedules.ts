import { Queue } from "bullmq";
import { afterAll, beforeAll } from "vitest";
import type { Plan } from "@volley/contracts";
import { DEFAULT_ORG_ID, insertPlan, upsertPlanSchedule, type PlanRow, type PlanScheduleRow } from "@volley/db";
import { QUEUE_NAMES, upsertPlanScheduler } from "@volley/queue";
import type { UsedHubHarness } from "./use-hub-harness";

export interface UsedPlanSchedules {
  /** The schedules queue on the harness's Redis (BullMQ's job schedulers live there). */
  readonly queue: Queue;
  /**
   * Saves `document` as a plan of the default org with a schedule firing every second (the API
   * refuses more than once a minute; the scheduler takes any cron) and registers its job scheduler,
   * as web does on saving one (a disabled schedule's too: a scheduler a crash left behind).
   * Returns the plan, the schedule row and the first firing's time.
   */
  everySecond(document: Plan, opts?: { enabled?: boolean }): Promise<{ plan: PlanRow; schedule: PlanScheduleRow; next: number | null }>;
}

/** The file's schedules queue on `h`'s Redis: opened once the hub has started, closed before it stops. */
export function usePlanSchedules(h: UsedHubHarness): UsedPlanSchedules {
  let queue: Queue | undefined;
  beforeAll(() => {
    queue = new Queue(QUEUE_NAMES.schedules, { connection: h.redis });
  });
  afterAll(async () => {
    await queue?.close();
  });
  const opened = (): Queue => {
    if (!queue) throw new Error("the schedules queue opens in beforeAll: use it inside hooks and tests");
    return queue;
  };
  return {
    get queue() {
      return opened();
    },
    async everySecond(document, opts = {}) {
      const plan = await insertPlan(h.db.db, { orgId: DEFAULT_ORG_ID, document });
      const schedule = await upsertPlanSchedule(h.db.db, {
        orgId: DEFAULT_ORG_ID,
        planId: plan.id,
        cron: "* * * * * *",
        timezone: "UTC",
        enabled: opts.enabled ?? true,
        createdBy: null,
      });
      const next = await upsertPlanScheduler(opened(), {
        id: schedule.id,
        planId: plan.id,
        orgId: DEFAULT_ORG_ID,
        cron: schedule.cron,
        timezone: schedule.timezone,
      });
      return { plan, schedule, next };
    },
  };
}
