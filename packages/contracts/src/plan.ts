import { z } from "zod";
import { durationSchema } from "./duration";
import { targetSchema } from "./target";
import { parseThreshold } from "./threshold-metrics";
import { validateHttpLoad } from "./http-load-validation";
import { connectionsSchema, scenarioSchema, sweepSchema } from "./scenario";
import { validateSweep } from "./sweep-validation";
import { flowSchema } from "./flow";
import { validateFlow } from "./flow-validation";
import { validateHttpFamily } from "./http-family-validation";
import { validateUsers } from "./users-validation";
import { validateReconnect } from "./reconnect";

/**
 * The test plan: the one document users write (YAML or JSON), validated here and nowhere else.
 * Fields are added by later capabilities (more protocols, scenarios, sweeps); existing names never change.
 */
export * from "./target";

export * from "./scenario";

export * from "./flow";
export * from "./reconnect";
export * from "./flow-template";
export * from "./flow-codec";
export * from "./flow-validation";
export * from "./flow-hosts";
export * from "./plan-timing";
export * from "./json-path";

const AGENT_COUNT_FIX = { error: 'use a whole number of agents from 1 to 1000, or "all" for every idle agent of the pool' };

/**
 * A pool's name, wherever one comes from (a plan, an agent's hello, a join token): it names a hub
 * queue and, prefixed with the org, a registry key, so it never holds dots, slashes or capitals.
 */
export const poolNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "use lowercase letters, digits and dashes (1 to 63, starting with a letter or digit), e.g. default");

export const agentsSchema = z.strictObject({
  pool: poolNameSchema.default("default"),
  /**
   * How many agents share the run: a whole number (the run waits in the pool's queue until that many
   * agents are free, then takes the largest), or "all": every agent connected to the pool, once all
   * are free. Connections and rates are split by the agents' capacity. A run asking for more agents
   * than the pool has connected is refused when it is created.
   */
  count: z.union([z.number().int(AGENT_COUNT_FIX).min(1, AGENT_COUNT_FIX).max(1000, AGENT_COUNT_FIX), z.literal("all")], AGENT_COUNT_FIX).default(1),
  /**
   * An agent lost mid-run (gone past its reconnect grace, or its shard job failed): "error" (the
   * default when absent) stops the run as errored, since its load was not what the plan asked;
   * "degrade" lets the other agents finish and ends the run "degraded". Either way the reason names
   * the agent and every frame stored so far is kept.
   */
  onLoss: z.enum(["error", "degrade"], { error: 'use "error" (stop the run) or "degrade" (carry on with the other agents)' }).optional(),
  /**
   * How long the run may wait in its pool's queue for agents to be free (runs wait, first come
   * first served, while other runs hold the agents). Absent: no limit, it waits its turn. Past it,
   * the run ends errored naming the wait and the pool.
   */
  maxWait: durationSchema.optional(),
});

/** agents.count: a number of agents, or "all" idle agents of the pool at run start. */
export type AgentCount = z.output<typeof agentsSchema>["count"];

export type AgentLossPolicy = NonNullable<z.output<typeof agentsSchema>["onLoss"]>;

/** "metric op value[unit]" with a metric that is measured (threshold-metrics.ts holds the names). */
export const MAX_THRESHOLD_LENGTH = 200;

export const thresholdExpressionSchema = z.string().superRefine((expression, ctx) => {
  if (expression.length > MAX_THRESHOLD_LENGTH) {
    ctx.addIssue({ code: "custom", message: `must be at most ${MAX_THRESHOLD_LENGTH} characters, like "latency.p95 < 200ms"` });
    return;
  }
  const parsed = parseThreshold(expression);
  if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.message });
});

/**
 * A threshold: the expression alone (judged when the run ends), or an object whose `abortOnFail`
 * makes the hub stop the run early, as failed, once the expression breaks on the measurements so
 * far — checked every few seconds from `delay` after the start, never on warm-up alone.
 */
export const thresholdSchema = z.union(
  [
    thresholdExpressionSchema,
    z.strictObject({
      expression: thresholdExpressionSchema,
      abortOnFail: z.boolean().default(false),
      /** How long after the start the early checks begin (default: at once, after warm-up). */
      delay: durationSchema.optional(),
    }),
  ],
  {
    error: 'write a threshold as a string like "latency.p95 < 200ms", or an object like { expression: "latency.p95 < 200ms", abortOnFail: true, delay: "10s" }',
  },
);
export type Threshold = z.output<typeof thresholdSchema>;
export type ThresholdInput = z.input<typeof thresholdSchema>;

/** The expression of a threshold in either form. */
export const thresholdExpression = (t: Threshold | ThresholdInput): string => (typeof t === "string" ? t : t.expression);

/**
 * The checks every run gets besides its own thresholds, so a run that measured nothing never
 * passes: some messages were sent, some replies or deliveries came back, and no more than
 * `maxLossPercent` of them were lost. `sanity: false` turns them off (say, a plan that tests that
 * a server refuses connections).
 */
export const sanitySchema = z.union(
  [
    z.literal(false),
    z.strictObject({
      /** The most of the replies and deliveries due that may be lost, percent (default 5). */
      maxLossPercent: z.number().min(0).max(100).default(5),
    }),
  ],
  { error: "write sanity: false to turn the default checks off, or sanity: { maxLossPercent: 5 } to change the loss limit" },
);
export type Sanity = z.output<typeof sanitySchema>;
export const DEFAULT_SANITY: Exclude<Sanity, false> = { maxLossPercent: 5 };

/**
 * The largest plan, as JSON (UTF-8 bytes): every field is capped, and so is the whole, so a stored
 * plan, a queued job and an API body carrying one stay small (an API body may be larger: see web's
 * VOLLEY_MAX_BODY_BYTES). 512 KiB leaves room for the largest target.http.body.
 */
export const MAX_PLAN_BYTES = 524_288;

export const planSchema = z
  .strictObject({
    name: z.string().min(1, "must not be empty").max(200, "must be at most 200 characters"),
    target: targetSchema,
    connections: connectionsSchema,
    scenario: scenarioSchema,
    /** Talk to the application as it speaks: setup steps, message templates, reply matching, data (see flow.ts). */
    flow: flowSchema.optional(),
    /** Steps the message rate (latency vs messages/s, capacity search); see sweepSchema. */
    sweep: sweepSchema.optional(),
    thresholds: z.array(thresholdSchema).max(50).default([]),
    /** Default checks (something sent, something back, loss under a limit); absent = on with the defaults. */
    sanity: sanitySchema.optional(),
    agents: agentsSchema.default({ pool: "default", count: 1 }),
  })
  .superRefine((plan, ctx) => {
    if (plan.flow) validateFlow(plan.flow, { target: plan.target, scenarioKind: plan.scenario.kind, connections: plan.connections.count }, ctx);
    validateHttpFamily(plan.target, plan.flow, ctx);
    validateHttpLoad(plan, ctx);
    validateUsers(plan, ctx);
    validateReconnect(plan, ctx);
    validateSweep(plan, ctx);
    const encoding = plan.target.sockjs?.encoding;
    if (encoding === "text" && !plan.flow)
      ctx.addIssue({
        code: "custom",
        path: ["target", "sockjs", "encoding"],
        message:
          'is "text", but without a flow Volley sends its own binary messages, which SockJS carries only as base64: add a flow (messages in the app\'s own JSON or text), or remove encoding',
      });
    if (encoding === "base64" && plan.flow)
      ctx.addIssue({
        code: "custom",
        path: ["target", "sockjs", "encoding"],
        message: 'is "base64", but a flow sends the app\'s own text and reads its replies as text: remove encoding (a flow travels as text)',
      });
    const bytes = new TextEncoder().encode(JSON.stringify(plan)).length;
    if (bytes > MAX_PLAN_BYTES)
      ctx.addIssue({
        code: "custom",
        path: [],
        message: `the plan is ${bytes} bytes as JSON; a plan may be at most ${MAX_PLAN_BYTES} bytes (512 KiB) — shorten its text fields`,
      });
  });

/** A plan as users write it (defaults optional). */
export type PlanInput = z.input<typeof planSchema>;
/** A plan after validation (defaults filled in). */
export type Plan = z.output<typeof planSchema>;
