import { z } from "zod";
import { runSchema, runStatusSchema } from "./run";

/** What people add to runs and plans (tags, notes, the plan's baseline) and the run-list filters over them. */

const TAG_FIX = 'tags are 1 to 40 characters: letters, digits and . _ : / - (like "release-2.3" or "env:staging")';
export const tagSchema = z
  .string()
  .trim()
  .min(1, TAG_FIX)
  .max(40, TAG_FIX)
  .regex(/^[\p{L}\p{N}._:/-]+$/u, TAG_FIX);

export const tagsSchema = z
  .array(tagSchema)
  .max(20, "at most 20 tags")
  .transform((t) => [...new Set(t)]);

/** PATCH /api/v1/runs/{id} and /api/v1/plans/{id}/meta: only the fields sent change. */
export const metaPatchBodySchema = z
  .strictObject({
    tags: tagsSchema.optional(),
    notes: z.string().max(10_000, "keep notes under 10,000 characters").optional(),
  })
  .refine((b) => b.tags !== undefined || b.notes !== undefined, { message: 'send "tags" (a list of tags) and/or "notes" (text)', path: ["tags"] });
export type MetaPatchBody = z.infer<typeof metaPatchBodySchema>;

/** PUT /api/v1/plans/{id}/baseline: the run of this plan later runs are compared with. */
export const setBaselineBodySchema = z.strictObject({ runId: z.string().min(1, "name the run: its id, like run_…") });
export type SetBaselineBody = z.infer<typeof setBaselineBodySchema>;

/** A run share link: opens the run read-only for any signed-in member of its org. */
export const runShareSchema = z.object({
  id: z.string(),
  runId: z.string(),
  /** Path of the link on this Volley (prefix it with the origin you reach Volley at). */
  path: z.string(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
});
export type RunShare = z.infer<typeof runShareSchema>;

const DATE_FIX = "use a date (2026-11-25) or a date and time (2026-11-25T14:00:00Z)";
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const dateParam = (dayEnd: boolean) =>
  z
    .string()
    .trim()
    .refine((s) => /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s)), DATE_FIX)
    .transform((s) => new Date(Date.parse(s) + (dayEnd && DATE_ONLY.test(s) ? 86_400_000 : 0)));

/** The run-list filters beside paging (GET /api/v1/runs): all optional, combined with AND. */
export const runFilterFields = {
  status: runStatusSchema.optional(),
  planId: z.string().min(1).optional(),
  /** Text found in the run's name or id (case-insensitive). */
  q: z.string().trim().min(1).max(100, "keep the search under 100 characters").optional(),
  /** Runs carrying this tag. */
  tag: tagSchema.optional(),
  /** Created at or after (a date means its start, UTC). */
  from: dateParam(false).optional(),
  /** Created before (a date means the start of the day after: `to=2026-11-25` includes that day). */
  to: dateParam(true).optional(),
};

/** GET /api/v1/runs/{id}: the run, with what people added to it. */
export const runWithMetaSchema = runSchema.extend({
  /** The saved plan it ran (null: an inline plan). */
  planId: z.string().nullable(),
  /** Which version of that plan it ran (GET /api/v1/plans/{id}/versions); null for an inline plan or a run from before versions were recorded. */
  planVersion: z.number().int().nullable(),
  tags: z.array(z.string()),
  notes: z.string(),
  /** Whether it is its plan's baseline (what the plan's other runs are compared with). */
  baseline: z.boolean(),
  /** The plan schedule that started it (null: a person or CI did). */
  scheduleId: z.string().nullable(),
});
export type RunWithMeta = z.infer<typeof runWithMetaSchema>;

/** The metrics a plan's trend draws and judges against its baseline. */
export const TREND_METRICS = ["p95", "capacity", "errorRate", "receiveRate"] as const;
export type TrendMetric = (typeof TREND_METRICS)[number];

/** GET /api/v1/plans/{id}/trend: the plan's finished runs, oldest first, flagged where they regressed against its baseline. */
export const planTrendSchema = z.object({
  planId: z.string(),
  planName: z.string(),
  baselineRunId: z.string().nullable(),
  /** The plan version the baseline ran (null: no baseline, or not recorded). */
  baselinePlanVersion: z.number().int().nullable(),
  /** A metric this much worse than the baseline's (and past its noise floor) is a regression. */
  tolerancePct: z.number(),
  points: z.array(
    z.object({
      runId: z.string(),
      name: z.string(),
      status: runStatusSchema,
      at: z.string(),
      tags: z.array(z.string()),
      /** The plan version the run ran (null: not recorded). A regression against a baseline of another version compares different plans. */
      planVersion: z.number().int().nullable(),
      /** Headline latency p95, ms (round trips, or deliveries when the run timed none). */
      p95: z.number().nullable(),
      /** Sweeps with stopWhen: the achieved send rate of the highest step that held, messages/s. */
      capacity: z.number().nullable(),
      /** Errors per attempt (messages sent and connections tried), %. */
      errorRate: z.number().nullable(),
      errors: z.number(),
      sendRate: z.number(),
      receiveRate: z.number(),
      /** The metrics worse than the baseline's (empty without a baseline, and for the baseline itself). */
      regressions: z.array(z.enum(TREND_METRICS)),
    }),
  ),
});
export type PlanTrend = z.infer<typeof planTrendSchema>;
export type PlanTrendPoint = PlanTrend["points"][number];
