import { z } from "zod";
import { latencySummarySchema } from "./run";

/** One point of an HdrHistogram percentile distribution: the value (ms) at a percentile, and how many samples lie at or below it. */
export const spectrumPointSchema = z.object({
  percentile: z.number().min(0).max(100),
  ms: z.number(),
  count: z.number().int(),
});
export type SpectrumPoint = z.infer<typeof spectrumPointSchema>;

/** What one agent measured over the run (every shard it ran, warm-up left out of percentiles). */
export const agentBreakdownSchema = z.object({
  agentId: z.string(),
  /** The agent's name as its org lists it now (null: the agent was removed since); added when the analysis is read. */
  agentName: z.string().nullable().optional(),
  shards: z.number().int(),
  intervals: z.number().int(),
  /** Intervals in which the agent reported itself saturated. */
  saturated: z.number().int(),
  sent: z.number().int(),
  received: z.number().int(),
  lost: z.number().int(),
  errors: z.number().int(),
  disconnects: z.number().int(),
  latency: latencySummarySchema,
  connect: latencySummarySchema,
  /** Broadcast and groups: the deliveries this agent's receivers got, and their latency (absent without deliveries). */
  delivery: z.object({ received: z.number().int(), lost: z.number().int(), latency: latencySummarySchema }).optional(),
  /** Worst values the agent reported: CPU % of one core, event-loop delay and send lag (ms), resident memory (MB). */
  health: z.object({ cpuMax: z.number(), eventLoopMaxMs: z.number(), sendLagMaxMs: z.number(), rssMbMax: z.number() }),
});
export type AgentBreakdown = z.infer<typeof agentBreakdownSchema>;

/**
 * `GET /api/v1/runs/{id}/analysis`: the merged histograms' percentile distributions (one per timed
 * kind present in the run, keyed by metric name, e.g. message.latency, ws.connect) and the
 * per-agent breakdown. Warm-up intervals are left out, as in the summary.
 */
export const runAnalysisSchema = z.object({
  spectra: z.record(z.string(), z.array(spectrumPointSchema)),
  agents: z.array(agentBreakdownSchema),
});
export type RunAnalysis = z.infer<typeof runAnalysisSchema>;
