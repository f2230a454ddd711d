import { z } from "zod";
import { planSchema } from "./plan";

export const runStatusSchema = z.enum(["queued", "running", "passed", "failed", "errored", "aborted"]);
export type RunStatus = z.infer<typeof runStatusSchema>;
export const FINAL_RUN_STATUSES: readonly RunStatus[] = ["passed", "failed", "errored", "aborted"];

export const createRunBodySchema = z.strictObject({ plan: planSchema });
export type CreateRunBody = z.infer<typeof createRunBodySchema>;

export const createRunResponseSchema = z.object({ id: z.string() });

/** Latency percentiles in milliseconds; null when nothing was measured. */
export const latencySummarySchema = z.object({
  count: z.number().int(),
  min: z.number().nullable(),
  mean: z.number().nullable(),
  p50: z.number().nullable(),
  p90: z.number().nullable(),
  p95: z.number().nullable(),
  p99: z.number().nullable(),
  max: z.number().nullable(),
});
export type LatencySummary = z.infer<typeof latencySummarySchema>;

/** The run summary. CI scripts depend on these names: extend, never rename. */
export const runSummarySchema = z.object({
  messages: z.object({
    sent: z.number().int(),
    received: z.number().int(),
    lost: z.number().int(),
    duplicated: z.number().int(),
    outOfOrder: z.number().int(),
    /** Achieved send rate over the measured (non-warm-up) intervals, messages per second. */
    sendRate: z.number(),
    receiveRate: z.number(),
  }),
  /** Round-trip latency from the intended send time, ms. */
  latency: latencySummarySchema,
  /** Actual minus intended send time, ms: how late the agent was. */
  sendLag: latencySummarySchema,
  connect: z.object({
    opened: z.number().int(),
    failed: z.number().int(),
    latency: latencySummarySchema,
  }),
  errors: z.record(z.string(), z.number().int()),
  intervals: z.object({ measured: z.number().int(), warmup: z.number().int(), saturated: z.number().int() }),
  thresholds: z.array(
    z.object({ expression: z.string(), ok: z.boolean(), actual: z.number().nullable(), message: z.string() }),
  ),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

export const runSchema = z.object({
  id: z.string(),
  status: runStatusSchema,
  /** Why the run ended as it did (errors, failed thresholds); null while running or when passed. */
  reason: z.string().nullable(),
  name: z.string(),
  plan: planSchema,
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  summary: runSummarySchema.nullable(),
});
export type Run = z.infer<typeof runSchema>;

/** One point of the run timeline: all shards merged for one 1 s interval. */
export const intervalPointSchema = z.object({
  index: z.number().int(),
  /** Interval start, epoch ms (hub clock). */
  t: z.number(),
  warmup: z.boolean(),
  saturated: z.boolean(),
  connections: z.number().int(),
  sent: z.number().int(),
  received: z.number().int(),
  errors: z.number().int(),
  p50: z.number().nullable(),
  p95: z.number().nullable(),
  p99: z.number().nullable(),
  max: z.number().nullable(),
});
export type IntervalPoint = z.infer<typeof intervalPointSchema>;
