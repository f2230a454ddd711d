import { z } from "zod";
import { rateChangeSchema } from "./rate-control";
import { planSchema } from "./plan";
import { preflightWarningSchema } from "./agent-load";

/**
 * `degraded`: an agent was lost mid-run under `agents.onLoss: degrade`; the others finished, so the
 * results are real but from less load than planned (never a pass: CI exit codes treat it as an error).
 * `inconclusive`: the run completed, but what decides its verdict was never measured on the server's
 * account: a capacity search (sweep with stopWhen) none of whose steps could be judged, because the
 * load generator limited the first step or it was cut short. Neither a pass nor a fail; the reason
 * says why and what to change (CI exit codes treat it as an error). A threshold on something the
 * run did not measure is not this: it fails, since the server gave nothing to judge it by.
 */
export const runStatusSchema = z.enum(["queued", "running", "passed", "failed", "errored", "aborted", "degraded", "inconclusive"]);
export type RunStatus = z.infer<typeof runStatusSchema>;
export const FINAL_RUN_STATUSES: readonly RunStatus[] = ["passed", "failed", "errored", "aborted", "degraded", "inconclusive"];

export const createRunBodySchema = z.strictObject({ plan: planSchema });
export type CreateRunBody = z.infer<typeof createRunBodySchema>;

/** `warnings`: what the plan asks of its pool's agents that may saturate them (agent-load.ts). */
export const createRunResponseSchema = z.object({ id: z.string(), warnings: z.array(preflightWarningSchema).optional() });

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

/** Deliveries of broadcast and group messages, one per (message, receiver). */
export const deliverySummarySchema = z.object({
  /** Deliveries the same-shard senders' messages called for (exact; see COUNTERS.deliveriesExpected). */
  expected: z.number().int(),
  received: z.number().int(),
  lost: z.number().int(),
  duplicated: z.number().int(),
  /**
   * Copies to members that joined after the message was sent (expected counts only the members
   * present at send time): not deliveries, not duplicates. Absent in summaries from before.
   */
  lateJoiner: z.number().int().optional(),
  outOfOrder: z.number().int(),
  /** Of received, those from senders on other shards (offset-corrected latency, see `offsetErrorMs`). */
  remote: z.number().int(),
  /** received (same-shard) / expected, percent; null when nothing was expected. */
  ratio: z.number().nullable(),
  /** Deliveries per second over the sending time. */
  rate: z.number(),
  latency: latencySummarySchema,
});
export type DeliverySummary = z.infer<typeof deliverySummarySchema>;

/**
 * One sweep step: one point of the latency-vs-messages/s chart. Failed steps (stop condition
 * broken) and aborted ones (the run ended during the hold) are kept, to be drawn hollow.
 */
export const sweepStepSchema = z.object({
  index: z.number().int(),
  /** The planned rate, in `per` units (per connection, or the whole run's aggregate). */
  plannedRate: z.number(),
  per: z.enum(["connection", "aggregate"]),
  /** Hold start, epoch ms (hub clock), and the measured hold time, seconds. */
  startedAt: z.number(),
  seconds: z.number(),
  sent: z.number().int(),
  received: z.number().int(),
  lost: z.number().int(),
  errors: z.number().int(),
  disconnects: z.number().int(),
  /** Achieved: messages sent per second, all agents. */
  sendRate: z.number(),
  /** Achieved: replies (round trips) received per second. */
  receiveRate: z.number(),
  /** Achieved: broadcast/group deliveries per second (fan-out); 0 when the scenario has none. */
  deliveryRate: z.number(),
  /** Round trip (echo, ack, pong), ms, from the step's merged histograms. */
  latency: latencySummarySchema,
  /** Delivery latency, ms (broadcast, groups). */
  delivery: latencySummarySchema,
  /** Some agent reported itself saturated during the step: its latencies say more about the agent. */
  saturated: z.boolean(),
  /** The stop condition broke in this step. */
  failed: z.boolean(),
  /** The run ended (abort, error) before the step's hold was over. */
  aborted: z.boolean(),
  /** Why it failed: the limits it broke, like "p95 312ms > 200ms". */
  reason: z.string().nullable(),
  /**
   * The load generator, not the server, limited this step: an agent was saturated during its
   * judged hold (CPU, event loop, late or shed sends), so its figures are the agent's. It does not
   * decide the capacity either way; the sweep stopped or retried it (sweep.onSaturated). Absent in
   * summaries from before.
   */
  generatorLimited: z.boolean().optional(),
  /** Why, in the agent's words ("the agent was saturated in 1 of 3 s: CPU 97% > 90%"); null when not limited. */
  generatorReason: z.string().nullable().optional(),
  /** How many times the step ran (sweep.onSaturated: retry); the figures are the last run's. Absent: once. */
  attempts: z.number().int().optional(),
  /** Why the run before the last was set aside (its generatorReason). */
  retryReason: z.string().nullable().optional(),
  /**
   * Users (a sweep of scenario.arrivalRate, plannedRate in users/s): the step's arrivals that
   * started, and the users that completed or failed during it; dropped: arrivals that found every
   * user slot busy (connections.count), which makes the step generator-limited. `latency` is then
   * every timed step's. Absent for connection scenarios.
   */
  users: z.object({ started: z.number().int(), completed: z.number().int(), failed: z.number().int(), dropped: z.number().int() }).optional(),
});
export type SweepStep = z.infer<typeof sweepStepSchema>;

/** Capacity search: the highest step that met the SLO (the sweep's stopWhen). */
export const capacitySchema = z.object({
  /** The SLO as written, like "p95 <= 200ms". */
  slo: z.string(),
  /** The highest planned rate whose step held (per `per`); null when even the first step failed. */
  rate: z.number().nullable(),
  per: z.enum(["connection", "aggregate"]),
  /** That step's achieved messages sent/s and deliveries/s (the one number to put in a README). */
  sendRate: z.number().nullable(),
  deliveryRate: z.number().nullable(),
  step: z.number().int().nullable(),
  /**
   * No step broke the SLO on the server's account (the sweep ran out of steps, reached `until` or
   * its time, or ended at a step the agent limited): the server's capacity is at least `rate`, not
   * `rate` itself — shown as "≥". Absent in summaries made before.
   */
  lowerBound: z.boolean().optional(),
  /**
   * The search ended at a step the load generator limited (generatorLimited): the agent, not the
   * server, was the bottleneck there, so `rate` is a lower bound (null when that was the first step);
   * add agents and rerun. Absent or false otherwise.
   */
  agentSaturated: z.boolean().optional(),
  /**
   * Why the search ended, in a line: the step that broke the SLO and how, the step the load
   * generator limited and why (then `lowerBound` and `agentSaturated` are set: that step does not
   * decide the capacity), or null when no step broke it. Absent in summaries from before.
   */
  endedBy: z.string().nullable().optional(),
});
export type Capacity = z.infer<typeof capacitySchema>;

/**
 * Whether the search judged some step on the server's account: one held (`rate`), or the first broke
 * the SLO (the capacity is below it). Not when the load generator limited the first step or it was
 * cut short: then nothing was found either way, and the run ends `inconclusive`.
 */
export function capacityJudged(c: Capacity): boolean {
  return c.rate !== null || (!c.agentSaturated && !!c.endedBy);
}

/** The reason an inconclusive run gives (the hub's, and `volley-agent run`'s), or null when the search judged some step. */
export function unjudgedCapacityReason(c: Capacity): string | null {
  if (capacityJudged(c)) return null;
  if (c.agentSaturated)
    return `no step of the capacity search could be judged: ${c.endedBy ?? "the first step was limited by the load generator, not the server"}; add agents (or start the sweep at a lower rate) and rerun`;
  return "no step of the capacity search could be judged: the run ended before its first step's hold was over; give the run time for at least one whole step and rerun";
}

/** One timed kind, ms: connect, round trip, delivery, time to first message, the storm's canary. */
export const timingsSchema = z.object({
  connect: latencySummarySchema,
  roundTrip: latencySummarySchema,
  delivery: latencySummarySchema,
  firstMessage: latencySummarySchema,
  canary: latencySummarySchema,
  /** Plain HTTP: every request socket's connect (keepAlive: false: one per request); absent when none was opened. */
  httpConnect: latencySummarySchema.optional(),
});
export type Timings = z.infer<typeof timingsSchema>;

/** The storm scenario's canary: one extra connection pinging at its own rate while the crowd connects. */
export const canarySummarySchema = z.object({
  sent: z.number().int(),
  received: z.number().int(),
  lost: z.number().int(),
  /** Its round trips from the intended send time, ms (the same numbers as timings.canary). */
  latency: latencySummarySchema,
});
export type CanarySummary = z.infer<typeof canarySummarySchema>;

/** What a closed loop's numbers are, said wherever they are shown (summary, CLI, UI, report). */
export const CLOSED_LOOP_NOTE =
  "closed-loop response time, not latency from an intended send time: each user waits for its reply before sending again, so a slow server is sent less and the waits it caused are in no sample (coordinated omission)";

/** http-rps with `loop: closed`: N users each waiting for its reply; measured apart from `latency`, which stays empty. */
export const closedLoopSummarySchema = z.object({
  /** Each request from the moment its user was ready (its previous reply plus think time) to its reply, ms. */
  responseTime: latencySummarySchema,
  /** CLOSED_LOOP_NOTE: read these as response times, never as open-loop latency. */
  note: z.string(),
});
export type ClosedLoopSummary = z.infer<typeof closedLoopSummarySchema>;

/** The measured synchronized start: when each agent actually began vs the one planned instant (hub clock, ms). */
export const startReportSchema = z.object({
  plannedAt: z.number(),
  /** Latest minus earliest actual start over the shards that reported; null with fewer than two. */
  skewMs: z.number().nullable(),
  /** The largest actual-minus-planned start (negative: early, as the agent's clock saw it). */
  maxLateMs: z.number().nullable(),
  shards: z.array(z.object({ index: z.number().int(), agentId: z.string(), agentName: z.string(), startedAt: z.number(), lateMs: z.number() })),
});
export type StartReport = z.infer<typeof startReportSchema>;

/**
 * Flows (plan `flow`): what the user's own protocol did. Setup steps are timed apart from message
 * latency (`setup.<step>` histograms, failures as `errors.setup.<step>`); every incoming message is
 * counted per event, and those that answered nothing are counted and sampled, so the user sees what
 * the server actually sends.
 */
export const flowSummarySchema = z.object({
  /** One per setup step that ran or failed, in the order first seen. `count`: completed; `failed`: failed connections. */
  setup: z.array(z.object({ step: z.string(), count: z.number().int(), failed: z.number().int(), latency: latencySummarySchema })),
  /** Incoming messages per event (`message` when the protocol has no event names); unmatched: answered nothing. */
  events: z.array(z.object({ event: z.string(), received: z.number().int(), unmatched: z.number().int() })),
  /** Every incoming message that answered nothing (messages.unmatched). */
  unmatched: z.number().int(),
  /** A few unmatched messages as text, the first ones stored per event. */
  samples: z.array(z.object({ event: z.string(), data: z.string() })),
  /** Several message kinds: each kind's own round trip (message.latency.<kind>), ms. */
  kinds: z.array(z.object({ kind: z.string(), latency: latencySummarySchema })).optional(),
  /** Server push timed by the server's own stamp (flow.push); latency includes the clocks' offset. */
  push: z.object({ received: z.number().int(), clockAhead: z.number().int(), latency: latencySummarySchema }).optional(),
});
export type FlowSummary = z.infer<typeof flowSummarySchema>;

/**
 * Users (scenario kind `users`): how many arrived and how they ended, their time in the scenario,
 * and each step's time from its intended instant (`step.<name>`, failures `errors.step.<name>`).
 */
export const usersSummarySchema = z.object({
  started: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  /** Arrivals that found connections.count users already busy: never started, never queued. */
  dropped: z.number().int(),
  /** From each user's intended arrival to its leaving, ms. */
  time: latencySummarySchema,
  /** One per step name that ran or failed, in the order first seen. */
  steps: z.array(z.object({ step: z.string(), count: z.number().int(), failed: z.number().int(), latency: latencySummarySchema })),
  /**
   * Connect steps with a reconnect policy: connections reopened after the server closed them, drops
   * after which every attempt failed, and the time from each drop to its reconnect (its percentiles
   * say how long until that share of the dropped users were back).
   */
  reconnects: z.object({ reconnected: z.number().int(), failed: z.number().int(), time: latencySummarySchema }),
  /** Sends that could not go out because the user's connection was down (never silently skipped). */
  unsent: z.number().int(),
  /**
   * Users holding several connections (user-connections.ts): each connection's own opens, drops,
   * reconnects and connect and reconnect times, by its name. Absent with one connection a user.
   */
  connections: z
    .array(
      z.object({
        connection: z.string(),
        opened: z.number().int(),
        dropped: z.number().int(),
        reconnected: z.number().int(),
        reconnectFailed: z.number().int(),
        connect: latencySummarySchema,
        reconnect: latencySummarySchema,
      }),
    )
    .optional(),
});
export type UsersSummary = z.infer<typeof usersSummarySchema>;

/**
 * One reconnect storm: the server dropped connections in a burst (consecutive seconds with
 * connections.dropped, every shard merged) and those with a reconnect policy came back. `back` is
 * how long until that share of the burst's dropped connections had reconnected, each timed from
 * its own drop (reconnect.time, merged exactly): null when fewer came back before the next storm
 * began or the run ended.
 */
export const reconnectStormSchema = z.object({
  /** The burst's first second: its interval index, and its start, epoch ms (hub clock). */
  index: z.number().int(),
  startedAt: z.number(),
  /** How many consecutive seconds the drops lasted. */
  seconds: z.number().int(),
  dropped: z.number().int(),
  /** Open connections at the end of the second before the burst (null: the burst began the run). */
  connectedBefore: z.number().int().nullable(),
  /** The fewest open at the end of a second from the burst until every dropped one was back or given up (or, short of that, the next storm or the run's end). */
  connectedLowest: z.number().int(),
  /** Reconnects, and drops after which every attempt failed, from the burst until the next storm or the run's end. */
  reconnected: z.number().int(),
  failed: z.number().int(),
  /** ms from the drop until 50, 90 and 99 % of the dropped were back. */
  back: z.object({ p50: z.number().nullable(), p90: z.number().nullable(), p99: z.number().nullable() }),
  /** Open connections at the end of each second from the burst's first until the next storm or the run's end (at most 300). */
  connected: z.array(z.number().int()),
});
export type ReconnectStorm = z.infer<typeof reconnectStormSchema>;

/** The run summary. CI scripts depend on these names: extend, never rename. */
export const runSummarySchema = z.object({
  messages: z.object({
    sent: z.number().int(),
    received: z.number().int(),
    lost: z.number().int(),
    /**
     * Planned messages the agent gave up on unsent because it had fallen too far behind (its own
     * saturation, not the target's doing); not in sent. Absent in summaries from before.
     */
    shed: z.number().int().optional(),
    /** Planned messages never sent because the server had closed their connection (COUNTERS.unsent); absent in summaries from before. */
    unsent: z.number().int().optional(),
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
  /**
   * Per error class (the keys of `errors`), a few distinct texts of what the errors said: close
   * codes and reasons, HTTP statuses, the server's own words; the first ones in interval order, at
   * most ERROR_SAMPLES_PER_CLASS each. Absent when no error was sampled (and in summaries from before).
   */
  errorSamples: z.record(z.string(), z.array(z.string())).optional(),
  /** Broadcast and groups; absent for scenarios without deliveries (and in summaries from before). */
  deliveries: deliverySummarySchema.optional(),
  /** Every timed kind side by side (absent in summaries from before). */
  timings: timingsSchema.optional(),
  /**
   * MQTT: publishes the broker acknowledged (QoS 1 PUBACK, QoS 2 PUBCOMP) and retained copies it
   * replayed on subscribe (neither replies nor deliveries). Absent for other protocols and at QoS 0
   * without retained copies.
   */
  mqtt: z.object({ acked: z.number().int(), retained: z.number().int() }).optional(),
  /** Storm: the canary connection's pings, counted apart from `messages` (absent for other scenarios). */
  canary: canarySummarySchema.optional(),
  /** http-rps `loop: closed`: its response times, apart from `latency` (absent for open-loop runs). */
  closedLoop: closedLoopSummarySchema.optional(),
  /** Sweeps: one record per step, in order (absent without a sweep). */
  steps: z.array(sweepStepSchema).optional(),
  /** Sweeps with stopWhen: the highest rate that met it. */
  capacity: capacitySchema.optional(),
  /** Flows: setup steps, incoming events, unmatched messages and their samples (absent for runs without a flow's metrics). */
  flow: flowSummarySchema.optional(),
  /** Users (scenario kind users): arrivals, outcomes, time in the scenario and per step (absent otherwise). */
  users: usersSummarySchema.optional(),
  /**
   * Reconnect storms, in order (at most 100): bursts of server drops in a run whose connections
   * reconnect, with how long until 50/90/99 % were back. Absent when nothing reconnected or tried to.
   */
  reconnectStorms: z.array(reconnectStormSchema).optional(),
  /** How far apart the agents actually started (absent when no agent reported its start, and in summaries from before). */
  start: startReportSchema.optional(),
  intervals: z.object({ measured: z.number().int(), warmup: z.number().int(), saturated: z.number().int() }),
  /**
   * Stored histograms that could not be decoded (a damaged row, a frame from an older version), left
   * out of every percentile so the rest of the run still reads; their frames' counters are counted.
   * Per metric: how many, and the intervals (seconds) they were for. Absent when none was.
   */
  leftOut: z
    .object({
      histograms: z.number().int(),
      metrics: z.array(z.object({ metric: z.string(), count: z.number().int(), intervals: z.array(z.number().int()) })),
      message: z.string(),
    })
    .optional(),
  /** The plan's thresholds, then the default sanity checks (`kind: "sanity"`; see the plan's `sanity`). */
  thresholds: z.array(
    z.object({
      expression: z.string(),
      ok: z.boolean(),
      actual: z.number().nullable(),
      message: z.string(),
      kind: z.enum(["threshold", "sanity"]).optional(),
    }),
  ),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

/**
 * A queued run's place in its pool's line: runs wait, first come first served, until the agents
 * they ask for are free (plan `agents.maxWait` bounds the wait). position 1 = next to get agents.
 */
export const runQueueSchema = z.object({
  pool: z.string(),
  position: z.number().int().positive(),
  /** Runs of the same pool queued before this one and still waiting. */
  ahead: z.number().int().nonnegative(),
});
export type RunQueue = z.infer<typeof runQueueSchema>;

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
  /** While queued: its place in the pool's line (absent or null otherwise). */
  queue: runQueueSchema.nullable().optional(),
  /** Live rate changes made while it ran (POST /api/v1/runs/{id}/rate), in order; absent or empty: none. */
  rateChanges: z.array(rateChangeSchema).optional(),
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
  /** Replies not received within the message timeout. */
  lost: z.number().int(),
  /** Connections closed (by the server, the network or an error) during the interval. */
  disconnects: z.number().int(),
  /** Connection attempts that failed during the interval. */
  connectFailed: z.number().int(),
  /** Worst agent health over the interval's shards: CPU % of one core, event-loop delay and send lag in ms. */
  health: z.object({ cpu: z.number(), eventLoopMs: z.number(), sendLagMs: z.number(), agents: z.number().int() }),
  p50: z.number().nullable(),
  p95: z.number().nullable(),
  p99: z.number().nullable(),
  max: z.number().nullable(),
  /** connections.stages: the stage the interval starts in (for shading stage boundaries). */
  stage: z.number().int().optional(),
  /** sweep: the step whose hold the interval belongs to. */
  step: z.number().int().optional(),
  /** Broadcast and groups: deliveries received in the interval and their latency, ms. */
  delivery: z
    .object({ received: z.number().int(), lost: z.number().int(), p50: z.number().nullable(), p95: z.number().nullable(), p99: z.number().nullable() })
    .optional(),
});
export type IntervalPoint = z.infer<typeof intervalPointSchema>;
