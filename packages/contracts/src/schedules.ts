import cronParser from "cron-parser";
import { z } from "zod";

/**
 * Scheduled runs: a plan started on a cron schedule. The same parser BullMQ's job schedulers use
 * (cron-parser 4) checks the expression here, so a schedule the API accepts is one BullMQ can run.
 */

/** A schedule may start a run at most this often: runs of one plan would overlap and queue up otherwise. */
export const MIN_SCHEDULE_SPACING_S = 60;

const CRON_FIX = 'use 5 fields (minute hour day-of-month month day-of-week), like "0 3 * * *" for 03:00 every day, or 6 with seconds first';

/** The next `count` firings of a cron expression in `timezone`, or why it cannot fire. */
export function cronFirings(cron: string, timezone: string, count: number, from: Date = new Date()): { at: Date[] } | { error: string } {
  const fields = cron.trim().split(/\s+/).length;
  if (fields < 5 || fields > 6) return { error: `has ${fields} field${fields === 1 ? "" : "s"}; ${CRON_FIX}` };
  try {
    const it = cronParser.parseExpression(cron, { tz: timezone, currentDate: from });
    const at: Date[] = [];
    for (let i = 0; i < count && it.hasNext(); i++) at.push(it.next().toDate());
    if (at.length === 0) return { error: "never fires" };
    return { at };
  } catch (err) {
    return { error: `${err instanceof Error ? err.message : String(err)}; ${CRON_FIX}` };
  }
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** PUT /api/v1/plans/{id}/schedule: when the plan runs by itself. */
export const planScheduleBodySchema = z
  .strictObject({
    cron: z.string().trim().min(1, `is empty; ${CRON_FIX}`).max(120, "keep the expression under 120 characters"),
    timezone: z.string().trim().min(1).max(64).default("UTC"),
    enabled: z.boolean().default(true),
  })
  .superRefine((body, ctx) => {
    if (!isTimeZone(body.timezone)) {
      ctx.addIssue({ code: "custom", path: ["timezone"], message: `"${body.timezone}" is not a time zone; use an IANA name like "UTC" or "Europe/Berlin"` });
      return;
    }
    const f = cronFirings(body.cron, body.timezone, 3);
    if ("error" in f) return void ctx.addIssue({ code: "custom", path: ["cron"], message: `"${body.cron}" ${f.error}` });
    const spacing = f.at.length > 1 ? Math.min(...f.at.slice(1).map((d, i) => (d.getTime() - f.at[i]!.getTime()) / 1000)) : Infinity;
    if (spacing < MIN_SCHEDULE_SPACING_S) {
      ctx.addIssue({
        code: "custom",
        path: ["cron"],
        message: `"${body.cron}" fires every ${spacing} s; a schedule may start a run at most once a minute (like "*/5 * * * *" for every 5 minutes)`,
      });
    }
  });
export type PlanScheduleBody = z.infer<typeof planScheduleBodySchema>;

export const planScheduleSchema = z.object({
  id: z.string(),
  planId: z.string(),
  cron: z.string(),
  timezone: z.string(),
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** When it last fired, the run it started (null if that firing started none), and why not. */
  lastRunAt: z.string().nullable(),
  lastRunId: z.string().nullable(),
  lastError: z.string().nullable(),
  /** When it fires next; null while disabled. */
  nextRunAt: z.string().nullable(),
});
export type PlanSchedule = z.infer<typeof planScheduleSchema>;

/** The job a plan's job scheduler emits at each firing; a hub turns it into a run. */
export const scheduledRunJobSchema = z.object({ scheduleId: z.string().min(1), planId: z.string().min(1), orgId: z.string().min(1) });
export type ScheduledRunJob = z.infer<typeof scheduledRunJobSchema>;
