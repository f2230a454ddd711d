import { z } from "zod";
import { durationSchema } from "./duration";
import type { Plan } from "./plan";

/**
 * What a user (its connect step) or a connection (connections.reconnect) does when the server
 * closes its connection (a deploy, an idle-timeout proxy): reconnect the same way (the same connect
 * step; a connection's setup steps again), at once (`immediate`) or after `delay` doubling up to
 * `maxDelay` (`backoff`), each wait ± `jitter` of itself at random so users dropped together do not
 * return together, at most `maxAttempts` times per drop. Absent: no reconnect (a later step on the
 * connection fails the user).
 */
export const reconnectSchema = z.strictObject({
  policy: z.enum(["immediate", "backoff"]).default("backoff"),
  maxAttempts: z.number().int().min(1).max(1000).default(5),
  delay: durationSchema.default("200ms"),
  maxDelay: durationSchema.default("10s"),
  jitter: z.number().min(0).max(1).default(0.5),
});
export type Reconnect = z.output<typeof reconnectSchema>;

/**
 * connections.reconnect goes on a per-connection schedule: one that continues where it stopped.
 * Stages, sweeps, aggregate rates and closed loops schedule connections otherwise; users reconnect
 * through their connect step.
 */
export function validateReconnect(plan: Plan, ctx: z.RefinementCtx): void {
  if (!plan.connections.reconnect) return;
  const s = plan.scenario;
  const why =
    s.kind === "users"
      ? "users reconnect through their connect step: move it to flow.steps' connect: { reconnect: {…} }"
      : plan.connections.stages
        ? "connections.stages open and close connections themselves: remove reconnect or the stages"
        : plan.sweep
          ? "a sweep schedules every connection per step: remove reconnect or the sweep"
          : s.kind === "http-rps" && s.loop === "closed"
            ? "a closed loop has no schedule to continue: remove reconnect or use loop: open"
            : s.message.per !== "connection"
              ? "an aggregate rate goes on over the other connections: reconnect needs message.per: connection"
              : undefined;
  if (why) ctx.addIssue({ code: "custom", path: ["connections", "reconnect"], message: why });
}
