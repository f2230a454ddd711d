import { z } from "zod";
import { durationMs, durationSchema, MAX_DURATION_FIX, MAX_DURATION_MS } from "./duration";
import { reconnectSchema } from "./reconnect";

/**
 * The plan's `connections` and `scenario` sections, and the optional `sweep`.
 *
 * Schedule semantics (the engine follows these; how long each phase lasts is plan-timing.ts, which
 * web's quotas and the hub's deadlines read too):
 * - `per: connection`: every connection sends `rate` messages per second for exactly `duration`
 *   from the moment it opened (constant arrival: rate × duration messages; Poisson: that many in
 *   expectation), so a connection that opened late sends as many messages as the first one and
 *   the achieved per-connection rate is the plan's. The shard ends when the last connection's
 *   window has ended and its replies are in (or timed out).
 * - `per: aggregate`: one open-loop schedule for the shard, `rate` messages per second from the
 *   first open for `duration` (rate × duration in all, like k6's constant-arrival-rate), each
 *   message on the next open connection in turn. Connections still open at connections.rate, so a
 *   ramp longer than `duration` keeps the shard until its last attempt (sending stopped).
 * - `summary.messages.sendRate` is sent messages over the sending time only: the wait for the last
 *   replies after the last send (the drain) is not part of it.
 * - With `connections.stages` a connection also stops when a falling stage closes it; the run lasts
 *   the stages' total. With `sweep`, connections open first, then each step sends at its own rate
 *   for `hold`, pauses for `gap`; `duration` caps the whole sweep.
 */

export const stageSchema = z.strictObject({
  /** How long this stage lasts; the open connections move linearly to `target` over it. */
  duration: durationSchema,
  /** Connections open at the end of the stage. */
  target: z.number().int().min(0).max(1_000_000),
});
export type Stage = z.output<typeof stageSchema>;

export const connectionsSchema = z
  .strictObject({
    /** How many connections (with `stages`: the most that will be open at once, at least the highest target). */
    count: z.number().int().min(1).max(1_000_000),
    /** New connections opened per second while ramping up (without `stages`). */
    rate: z.number().positive().max(100_000).default(100),
    /** Ramp up and down: `[{ duration: 20s, target: 300 }, { duration: 30s, target: 300 }, { duration: 10s, target: 0 }]`. */
    stages: z.array(stageSchema).min(1).max(100).optional(),
    /**
     * A connection the server closes reconnects (its flow's setup steps again) and its schedule
     * goes on for the rest of its window; what it could not send while down is messages.unsent.
     * Per-connection scenarios without stages or a sweep. Absent: a dropped connection stays down.
     */
    reconnect: reconnectSchema.optional(),
  })
  .superRefine((c, ctx) => {
    if (!c.stages) return;
    const highest = Math.max(...c.stages.map((s) => s.target));
    if (highest > c.count) {
      ctx.addIssue({ code: "custom", path: ["count"], message: `must be at least the highest stage target (${highest}); set count: ${highest}` });
    }
    c.stages.forEach((s, i) => {
      if (durationMs(s.duration) <= 0) ctx.addIssue({ code: "custom", path: ["stages", i, "duration"], message: "must be longer than 0, like 20s" });
    });
    // Each stage is bounded; so is their sum, which is how long the run lasts.
    const total = c.stages.reduce((sum, st) => sum + durationMs(st.duration), 0);
    if (total > MAX_DURATION_MS)
      ctx.addIssue({ code: "custom", path: ["stages"], message: `the stages last ${Math.round(total / 3_600_000)}h together; ${MAX_DURATION_FIX}` });
  });

export const messageSchema = z.strictObject({
  bytes: z.number().int().min(32, "must be at least 32: each message carries its id, sequence and intended send time").max(1_048_576).default(64),
  /** Messages per second, per connection or in aggregate (see `per`). */
  rate: z.number().positive().max(1_000_000),
  per: z.enum(["connection", "aggregate"]).default("connection"),
  arrival: z.enum(["constant", "poisson"]).default("constant"),
  /** A reply (or a delivery) not received within this time counts as lost. */
  timeout: durationSchema.default("10s"),
});
export type Message = z.output<typeof messageSchema>;

const common = {
  message: messageSchema,
  /** How long each connection sends, from when it opened (see the schedule semantics above). */
  duration: durationSchema,
  /** Intervals starting within this time of the synchronized start are warm-up, left out of summaries. */
  warmup: durationSchema.default(0),
};

/** Every message comes back to its sender: round-trip latency. */
export const echoScenarioSchema = z.strictObject({ kind: z.literal("echo"), ...common });

const roomName = z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, "use 1 to 100 letters, digits, _ . : or -");

/**
 * One room for every connection (every shard): each message goes to every member. Every receiver
 * times every delivery; with `echo` the server also hands the sender its own message back (the
 * 2011 SockJS/Socket.IO benchmark's servers do), which the sender times as a round trip.
 */
export const broadcastScenarioSchema = z.strictObject({
  kind: z.literal("broadcast"),
  ...common,
  room: roomName.default("volley"),
  /** The server sends each message back to its sender too (it is then timed as a round trip, not a delivery). */
  echo: z.boolean().default(true),
});

/** Fixed groups of `size` members, each in its own room: a member's message reaches the other size − 1. */
export const groupsScenarioSchema = z.strictObject({
  kind: z.literal("groups"),
  ...common,
  size: z.number().int().min(2).max(10_000).default(4),
  /** Room names are `<room>-<shard>-<group>`: groups never span agents, so every delivery is timed exactly. */
  room: roomName.default("group"),
});

/**
 * Connect at `connections.rate` up to `connections.count` and hold; each connection pings at
 * `message.rate` per second (every 6 s is `rate: 0.1667`), and one extra canary connection pings
 * at `canary.rate`, timed separately (`canary.latency`), so the server's responsiveness under the
 * connection load shows apart from the crowd's.
 */
export const stormScenarioSchema = z.strictObject({
  kind: z.literal("storm"),
  ...common,
  canary: z.union([z.literal(false), z.strictObject({ rate: z.number().positive().max(1000).default(1) })]).default({ rate: 1 }),
});

/**
 * Requests at an open arrival rate, in aggregate over `connections.count` keep-alive connections
 * (Poisson by default): each message is one request, its reply the response. Works on any
 * request/response driver (http first of all; an echo over ws is the same measurement).
 */
export const httpRpsScenarioSchema = z.strictObject({
  kind: z.literal("http-rps"),
  ...common,
  message: messageSchema.extend({
    per: messageSchema.shape.per.removeDefault().default("aggregate"),
    arrival: messageSchema.shape.arrival.removeDefault().default("poisson"),
  }),
  /**
   * open: requests leave at message.rate whether or not earlier ones were answered; latency is
   * timed from each request's intended send time (`message.latency`), so a slow server shows as
   * latency, not as fewer requests. closed: every connection is a user that sends its next request
   * only once its reply is in, plus `thinkTime` (like `ab -c` or Locust users); message.rate then
   * caps the users' rate (set it high for no cap, like autocannon's -R), and what is timed is each
   * request's response time (`closed_loop.response_time`), reported apart: a slow server makes a
   * closed loop send less, so its response times hide the waits it never made (coordinated omission).
   */
  loop: z.enum(["open", "closed"]).default("open"),
  /** Closed loop only: each user's pause between a reply and its next request. */
  thinkTime: durationSchema.default(0),
  /**
   * Send exactly this many requests in total, over every connection and agent (like `ab -n`); the
   * run ends when the last is answered or timed out. `duration` is then the most the sending may take.
   */
  requests: z.number().int().min(1).max(1_000_000_000).optional(),
});
export type HttpRpsScenario = z.output<typeof httpRpsScenarioSchema>;

/** What a users plan's `message` holds when left out: only its timeout is read (the default reply wait is each step's own). */
const USERS_MESSAGE = { bytes: 64, rate: 1, per: "connection", arrival: "constant", timeout: "10s" } as const;

/**
 * Virtual users, like Artillery's and k6's arrival-rate scenarios: users arrive at `arrivalRate`
 * per second for `duration` (open arrival: a slow server does not slow arrivals, each arrival has
 * its intended instant), each runs `flow.steps` once and leaves. `connections.count` is the most
 * users at once; an arrival finding them all busy is counted in `users.dropped`, never queued.
 * Every step is timed from its intended instant (the arrival, or the end of the step before plus
 * its think time), so a slow server shows in step times instead of hiding in fewer users.
 */
export const usersScenarioSchema = z.strictObject({
  kind: z.literal("users"),
  /** Users arriving per second (over every agent); with `stages`, the rate they start from. */
  arrivalRate: z.number().min(0).max(100_000),
  arrival: z.enum(["constant", "poisson"]).default("constant"),
  /** How long users keep arriving. */
  duration: durationSchema,
  /**
   * Ramps of the arrival rate, like k6's ramping-arrival-rate and Artillery's phases: over each
   * stage the rate moves linearly from the previous stage's target (the first: arrivalRate) to
   * its own; a stage of 0s is a step. After the last stage the rate holds its target until
   * `duration` ends.
   */
  stages: z
    .array(z.strictObject({ duration: durationSchema, target: z.number().min(0).max(100_000) }))
    .min(1)
    .max(100)
    .optional(),
  warmup: durationSchema.default(0),
  /** A user still busy this long after its arrival is stopped and counted failed (bounds the run). */
  maxUserTime: durationSchema.default("2m"),
  /** Not used by users (steps carry their own timeouts); kept so every scenario has one shape. */
  message: messageSchema.default(USERS_MESSAGE),
});
export type UsersScenario = z.output<typeof usersScenarioSchema>;
export type UserStage = NonNullable<UsersScenario["stages"]>[number];

export const scenarioSchema = z.discriminatedUnion("kind", [
  echoScenarioSchema,
  broadcastScenarioSchema,
  groupsScenarioSchema,
  stormScenarioSchema,
  httpRpsScenarioSchema,
  usersScenarioSchema,
]);
export type Scenario = z.output<typeof scenarioSchema>;
export type ScenarioKind = Scenario["kind"];

const wholeSeconds = (what: string) =>
  durationSchema.refine((d) => durationMs(d) % 1000 === 0, `${what} must be whole seconds (like 3s), so every 1 s interval belongs to one step`);

/**
 * When a sweep step counts as failed (and the sweep stops). Latency limits apply to the scenario's
 * main measure: the round trip when it has one (echo, broadcast with echo, storm, http-rps), else
 * the delivery latency (groups, broadcast without echo); for users, every timed step (each
 * `step.<name>`, merged).
 */
export const stopWhenSchema = z
  .strictObject({
    p50: durationSchema.optional(),
    p95: durationSchema.optional(),
    p99: durationSchema.optional(),
    /** The slowest single message (the 2011 benchmark: an echo over 5 s ends the level). */
    max: durationSchema.optional(),
    /** Percent of the step's messages and deliveries lost, like 1 for 1 %. */
    lossRate: z.number().min(0).max(100).optional(),
    /** Percent of the step's messages that ended in an error. */
    errorRate: z.number().min(0).max(100).optional(),
    /** More than this many connections dropped during the step (0: any drop). */
    disconnects: z.number().int().min(0).optional(),
    /** Users only: percent of the users that left during the step who failed a step (or maxUserTime), like 1 for 1 %. */
    usersFailedRate: z.number().min(0).max(100).optional(),
  })
  .refine((s) => Object.values(s).some((v) => v !== undefined), "name at least one limit, like { p95: 200ms }");
export type StopWhen = z.output<typeof stopWhenSchema>;

/**
 * Steps the message rate (for users: scenario.arrivalRate, users/s over every agent, each step an
 * open arrival at its rate): step k sends at from + k × step (in message.per units) for `warmup`
 * (not judged) and then `hold` (judged), then pauses for `gap`; the sweep ends after `steps` steps,
 * past `until`, at the first step that breaks `stopWhen`, or when `scenario.duration` of stepping is
 * over. A step in which the agent flagged itself saturated was limited by the load generator, not
 * the server: it is marked (summary.steps[].generatorLimited, with why), never decides the capacity,
 * and stops the sweep or runs again (`onSaturated`). Every step is reported (summary.steps); with
 * `stopWhen` the highest rate that held is summary.capacity.
 */
export const sweepSchema = z
  .strictObject({
    /** The first step's rate; absent, scenario.message.rate (users: scenario.arrivalRate). */
    from: z.number().positive().max(1_000_000).optional(),
    step: z.number().positive().max(1_000_000),
    /** The last rate to try (inclusive). */
    until: z.number().positive().max(10_000_000).optional(),
    /** At most this many steps. */
    steps: z.number().int().min(1).max(1000).default(20),
    hold: wholeSeconds("hold").default("3s"),
    gap: wholeSeconds("gap").default("1s"),
    /**
     * Each step first sends at its rate for this long before its hold, and that time is left out
     * of the step's figures and judgement: connections, pools, caches and the JIT warm up at the new
     * rate, so a step is not judged from a cold start. Counts toward scenario.duration like the hold.
     * Absent: none.
     */
    warmup: wholeSeconds("warmup")
      .optional()
      .describe(
        "Per step: send at the step's rate for this long before its hold, left out of the step's figures and judgement (no cold start). Whole seconds, like 2s; absent: none.",
      ),
    /**
     * A step in which the agent was saturated (its own CPU, event loop or send lag: see
     * summary.intervals.saturated) measured the load generator, not the server. `stop` (default):
     * the sweep ends there, the capacity a lower bound. `retry`: the step runs again at the same rate
     * in the next slot (retried steps take slots, so later steps may no longer fit in
     * scenario.duration), up to `retries` times; still saturated, the sweep ends as with `stop`.
     */
    onSaturated: z
      .enum(["stop", "retry"])
      .optional()
      .describe(
        "A step where the agent was saturated measured the load generator, not the server: stop the sweep there (default; capacity is then a lower bound) or retry the step at the same rate (up to `retries` times).",
      ),
    /** With onSaturated: retry, how many times a step may run again (default 1). */
    retries: z.number().int().min(1).max(5).optional().describe("With onSaturated: retry, how many times a step may run again (default 1)."),
    stopWhen: stopWhenSchema.optional(),
  })
  .superRefine((s, ctx) => {
    if (durationMs(s.hold) < 1000) ctx.addIssue({ code: "custom", path: ["hold"], message: "must be at least 1s" });
    if (s.until !== undefined && s.from !== undefined && s.until < s.from) {
      ctx.addIssue({ code: "custom", path: ["until"], message: `must be at least from (${s.from})` });
    }
  });
export type Sweep = z.output<typeof sweepSchema>;

/** What a sweep steps, as the plan writes it: users' arrival rate, else the message rate. */
export function sweepBaseRate(scenario: { kind: string; message: { rate: number }; arrivalRate?: number }): number {
  return scenario.kind === "users" ? (scenario.arrivalRate ?? 0) : scenario.message.rate;
}

/** The rate of each step a sweep may run, in message.per units (users: users/s). */
export function sweepRates(sweep: Sweep, messageRate: number): number[] {
  const from = sweep.from ?? messageRate;
  const rates: number[] = [];
  for (let k = 0; k < sweep.steps; k++) {
    const rate = round6(from + k * sweep.step);
    if (sweep.until !== undefined && rate > sweep.until + 1e-9) break;
    rates.push(rate);
  }
  return rates;
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
