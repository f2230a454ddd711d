import { z } from "zod";
import { runStatusSchema } from "./run";

/**
 * Messages the hub publishes on REDIS_KEYS.runEvents(runId), for the live feed: a status change, or
 * new interval rows stored (read them from the database; the event only says that there are some).
 */
export const runEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("status"), runId: z.string(), status: runStatusSchema, reason: z.string().nullable(), at: z.number() }),
  z.object({ type: z.literal("intervals"), runId: z.string(), stored: z.number().int().nonnegative(), at: z.number() }),
]);
export type RunEvent = z.infer<typeof runEventSchema>;
