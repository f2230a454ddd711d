import { z } from "zod";
import { durationSchema } from "./duration";

/**
 * The test plan: the one document users write (YAML or JSON), validated here and nowhere else.
 * Fields are added by later capabilities (more protocols, scenarios, sweeps); existing names never change.
 */
export const protocolSchema = z.enum(["ws"]);
export type Protocol = z.infer<typeof protocolSchema>;

export const targetSchema = z.strictObject({
  url: z.url({ protocol: /^(wss?|https?)$/, error: "must be an absolute ws://, wss://, http:// or https:// URL" }),
  protocol: protocolSchema.default("ws"),
  headers: z.record(z.string(), z.string()).optional(),
  /** How long one connection attempt may take before it counts as a timeout. */
  connectTimeout: durationSchema.default("10s"),
});

export const connectionsSchema = z.strictObject({
  count: z.number().int().min(1).max(1_000_000),
  /** New connections opened per second while ramping up. */
  rate: z.number().positive().max(100_000).default(100),
});

export const messageSchema = z.strictObject({
  bytes: z.number().int().min(32, "must be at least 32: each message carries its id, sequence and intended send time").max(1_048_576).default(64),
  /** Messages per second, per connection or in aggregate (see `per`). */
  rate: z.number().positive().max(1_000_000),
  per: z.enum(["connection", "aggregate"]).default("connection"),
  arrival: z.enum(["constant", "poisson"]).default("constant"),
  /** A reply not received within this time counts as lost. */
  timeout: durationSchema.default("10s"),
});

export const echoScenarioSchema = z.strictObject({
  kind: z.literal("echo"),
  message: messageSchema,
  /**
   * How long each connection sends, from when it opened; the run lasts the ramp (count / rate)
   * plus this.
   */
  duration: durationSchema,
  /** Intervals starting within this time of the synchronized start are warm-up, left out of summaries. */
  warmup: durationSchema.default(0),
});

export const scenarioSchema = z.discriminatedUnion("kind", [echoScenarioSchema]);

export const agentsSchema = z.strictObject({
  pool: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "use lowercase letters, digits and dashes").default("default"),
  count: z.number().int().min(1).max(1000).default(1),
});

export const thresholdSchema = z
  .string()
  .regex(
    /^\s*[a-z][a-z0-9_.]*\s*(<=|>=|<|>|==)\s*\d+(\.\d+)?\s*(ms|s|%)?\s*$/,
    'write a threshold like "latency.p95 < 200ms" or "errors.rate < 1%"',
  );

export const planSchema = z.strictObject({
  name: z.string().min(1).max(200),
  target: targetSchema,
  connections: connectionsSchema,
  scenario: scenarioSchema,
  thresholds: z.array(thresholdSchema).max(50).default([]),
  agents: agentsSchema.default({ pool: "default", count: 1 }),
});

/** A plan as users write it (defaults optional). */
export type PlanInput = z.input<typeof planSchema>;
/** A plan after validation (defaults filled in). */
export type Plan = z.output<typeof planSchema>;
