import { z } from "zod";

/**
 * Metric names are dotted; histogram values are microseconds (HdrHistogram, 3 significant digits),
 * encoded in the standard compressed base64 format.
 */
export const HISTOGRAMS = {
  /** Round trip: receive time minus intended send time. */
  messageLatency: "message.latency",
  /** Actual send time minus intended send time. */
  sendLag: "message.send_lag",
  /** TCP connect + WebSocket upgrade. */
  wsConnect: "ws.connect",
} as const;

/** Counters are totals for the interval, except gauges (named in GAUGES) which are the value at its end. */
export const COUNTERS = {
  sent: "messages.sent",
  received: "messages.received",
  lost: "messages.lost",
  /** A reply for a (connection, sequence) already answered: counted, not timed twice. */
  duplicated: "messages.duplicated",
  /** A reply older than one already received on the same connection. */
  outOfOrder: "messages.out_of_order",
  connectionsOpened: "connections.opened",
  connectionsFailed: "connections.failed",
  connectionsClosed: "connections.closed",
  connectionsActive: "connections.active",
} as const;
export const GAUGES: readonly string[] = [COUNTERS.connectionsActive];
/** Error counters are named `errors.<class>`: refused, timeout, handshake, protocol, closed, other. */
export const ERROR_PREFIX = "errors.";

export const healthSchema = z.object({
  /** Process CPU over the interval, percent of one core. */
  cpu: z.number().nonnegative(),
  eventLoopDelayMs: z.object({ p50: z.number().nonnegative(), max: z.number().nonnegative() }),
  rssMb: z.number().nonnegative(),
  /** Worst send lag in the interval, ms. */
  sendLagMaxMs: z.number().nonnegative(),
  /** True when the agent itself was the bottleneck (CPU, event loop or send lag over limits). */
  saturated: z.boolean(),
});
export type Health = z.infer<typeof healthSchema>;

export const intervalFrameSchema = z.object({
  runId: z.string().min(1),
  shardId: z.string().min(1),
  agentId: z.string().min(1),
  /** Per shard, starting at 0, +1 per frame; (shardId, seq) is unique and makes storage idempotent. */
  seq: z.number().int().nonnegative(),
  /** Interval number from the synchronized start (0 = first second of the run). */
  index: z.number().int().nonnegative(),
  /** Interval start in hub-clock epoch ms (agent clock corrected by the measured offset). */
  startedAt: z.number(),
  durationMs: z.number().positive(),
  warmup: z.boolean(),
  counters: z.record(z.string(), z.number().int().nonnegative()),
  histograms: z.record(z.string(), z.string()),
  health: healthSchema,
});
export type IntervalFrame = z.infer<typeof intervalFrameSchema>;
