import { z } from "zod";
import { intervalPointSchema, runStatusSchema } from "./run";

/** A run's status change, as the hub pushes it to browsers through the live feed (LIVE_FEED.events.status). */
export const runEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("status"), runId: z.string(), status: runStatusSchema, reason: z.string().nullable(), at: z.number() }),
]);
export type RunEvent = z.infer<typeof runEventSchema>;

/**
 * The browser live feed: web serves Socket.IO namespace /live (Redis adapter), the hub emits into
 * it with the Redis emitter. A browser emits `subscribe` {runId} and receives, in room
 * LIVE_FEED.room(runId), `points` (merged timeline points, upserted by index: a point is re-sent
 * when a slower shard's frame for the same second lands) and `status` (a RunEvent of type status).
 */
export const LIVE_FEED = {
  namespace: "/live",
  room: (runId: string) => `run:${runId}`,
  events: { subscribe: "subscribe", unsubscribe: "unsubscribe", points: "points", status: "status" },
} as const;

export const liveSubscribeSchema = z.object({ runId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a run id, like run_…") });
export const livePointsSchema = z.object({ runId: z.string(), points: z.array(intervalPointSchema) });
export type LivePoints = z.infer<typeof livePointsSchema>;
