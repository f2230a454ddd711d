import { z } from "zod";
import type { Plan } from "./plan";

/**
 * Live rate control: a running run's sending rate (users: arrival rate) changed from the run page or
 * `POST /api/v1/runs/{id}/rate`, as Locust changes users while a test runs. A change is a `scale`
 * of the plan's own rates (every shard's share scales alike, so the shares still add up to the
 * run's rate), applied by every agent at one instant `at` a moment after the request, so the
 * timeline shows one step, and recorded in the run (`rateChanges`).
 */

/** The most a change may scale the plan's rates by, either way (a typo of 1000× should not reach a server). */
export const MAX_RATE_SCALE = 100;
/** A change applies this long after it was asked for: time for every hub and agent to hear it. */
export const RATE_CHANGE_LEAD_MS = 1000;

/** Body of POST /api/v1/runs/{id}/rate: the new rate in the plan's own unit, or a scale of the plan's rates. */
export const rateChangeBodySchema = z
  .strictObject({
    /**
     * The new `scenario.message.rate` (messages/s, per connection or in aggregate, as the plan's `per`
     * says), or for users the new `scenario.arrivalRate` (users/s).
     */
    rate: z.number().positive().max(1_000_000).optional(),
    /**
     * Or: the connections open at once, over every agent (`connections.count` of the plan): more are
     * opened at connections.rate, fewer retire the newest (they stop sending and close once their
     * replies are in). Connection scenarios without stages; users plans change `rate`.
     */
    connections: z.number().int().min(1).max(1_000_000).optional(),
    /** Or: the plan's rates times this (0.5 halves them, 2 doubles them); 1 goes back to the plan's. */
    scale: z
      .number()
      .positive()
      .max(MAX_RATE_SCALE, `must be at most ${MAX_RATE_SCALE}`)
      .min(1 / MAX_RATE_SCALE, `must be at least 1/${MAX_RATE_SCALE}`)
      .optional(),
  })
  .refine((b) => [b.rate, b.scale, b.connections].filter((v) => v !== undefined).length === 1, {
    message:
      'give one of "rate" (the new rate in the plan\'s unit, like {"rate": 40}), "scale" (the plan\'s rates times it, like {"scale": 2}) or "connections" (how many open at once, like {"connections": 200})',
  });
export type RateChangeBody = z.infer<typeof rateChangeBodySchema>;

/** One change, as the run records it and the API returns it. */
export const rateChangeSchema = z.object({
  /** When every agent applied it, epoch ms (hub clock). */
  at: z.number(),
  /** The plan's rates times this from `at` on. */
  scale: z.number().positive(),
  /** The plan's headline rate after the change (messages/s or users/s, the plan's unit). */
  rate: z.number().positive(),
  /** What changed: the rate (in the plan's unit), or `connections` (then `rate` is how many and `scale` of the plan's count). */
  unit: z.enum(["msg/s per connection", "msg/s", "users/s", "connections"]),
  /** Who asked: the user's email or the API token's name. */
  by: z.string(),
});
export type RateChange = z.infer<typeof rateChangeSchema>;

/** The answer to POST /api/v1/runs/{id}/rate: the change just made and every change of the run so far. */
export const rateChangeResponseSchema = z.object({ id: z.string(), change: rateChangeSchema, rateChanges: z.array(rateChangeSchema) });
export type RateChangeResponse = z.infer<typeof rateChangeResponseSchema>;

/** What a live change scales: the plan's rates, or its connection count. */
const liveTargetSchema = z.enum(["rate", "connections"]).default("rate");

/** What web publishes on REDIS_KEYS.rate for every hub replica, which forwards it to its agents. */
export const rateRequestSchema = z.object({ runId: z.string().min(1), scale: z.number().positive(), at: z.number(), what: liveTargetSchema });
export type RateRequest = z.infer<typeof rateRequestSchema>;

/** hub → agent: from `at` (hub-clock epoch ms) the shard sends at its plan's rates times `scale`. */
export const shardRateSchema = z.object({ shardId: z.string(), scale: z.number().positive().max(MAX_RATE_SCALE), at: z.number(), what: liveTargetSchema });
export type ShardRate = z.infer<typeof shardRateSchema>;

/** The plan's headline rate and its unit: what `rate` in a change body means for this plan. */
export function planRate(plan: Plan): { rate: number; unit: RateChange["unit"] } {
  const s = plan.scenario;
  if (s.kind === "users") return { rate: s.arrivalRate, unit: "users/s" };
  return { rate: s.message.rate, unit: s.message.per === "connection" ? "msg/s per connection" : "msg/s" };
}

/** Why this plan's connection count cannot be changed while it runs, or null when it can. */
export function connectionsControlRefusal(plan: Plan): string | null {
  const s = plan.scenario;
  if (s.kind === "users") return "users plans open a connection per user: change their arrival rate instead";
  if (s.kind === "storm") return "a storm's connection count is what it measures; run it again with another count";
  if (plan.connections.reconnect) return "connections.reconnect is set: reconnecting connections and a changing count do not mix";
  return rateControlRefusal(plan);
}

/** Why this plan's rate cannot be changed while it runs, or null when it can. */
export function rateControlRefusal(plan: Plan): string | null {
  const s = plan.scenario;
  if (plan.sweep) return "a sweep sets its own rate at every step; its rate cannot be changed while it runs";
  if (s.kind === "users") return null;
  if (plan.connections.stages) return "connections.stages set when connections open and close; change message.rate on plans without stages";
  if (s.kind === "http-rps" && s.loop === "closed") return "a closed loop sends when replies come back, not at a rate; only open-loop plans can change rate";
  if (s.kind === "http-rps" && s.requests !== undefined)
    return "the plan sends an exact number of requests (scenario.requests); its rate cannot be changed while it runs";
  return null;
}

/** The scale a change body asks for on this plan; a `rate` on a users plan with stages is refused (its rate moves by itself). */
export function rateChangeScale(plan: Plan, body: RateChangeBody): { scale: number } | { error: string } {
  if (body.scale !== undefined) return { scale: body.scale };
  if (body.connections !== undefined) {
    const scale = body.connections / plan.connections.count;
    if (scale > MAX_RATE_SCALE)
      return {
        error: `connections: ${body.connections} is more than ${MAX_RATE_SCALE}× the plan's ${plan.connections.count}; change the plan and run it again`,
      };
    return { scale };
  }
  const { rate, unit } = planRate(plan);
  if (plan.scenario.kind === "users" && plan.scenario.stages)
    return { error: 'this users plan ramps its arrival rate with stages: give "scale" (like {"scale": 2}) to scale the whole ramp' };
  const scale = body.rate! / rate;
  if (scale > MAX_RATE_SCALE || scale < 1 / MAX_RATE_SCALE)
    return { error: `rate: ${body.rate} ${unit} is more than ${MAX_RATE_SCALE}× away from the plan's ${rate} ${unit}; change the plan and run it again` };
  return { scale };
}
