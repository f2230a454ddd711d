import { Emitter } from "@socket.io/redis-emitter";
import type { Redis } from "ioredis";
import { LIVE_FEED, type IntervalPoint, type LivePoints, type RunEvent } from "@volley/contracts";

export interface LiveFeedOptions {
  /** Any command connection: the emitter only PUBLISHes. */
  redis: Redis;
}

/**
 * Pushes run updates to browsers through web's Socket.IO namespace /live, with the Redis emitter
 * (no socket server here: web's servers pick the broadcast up through their Redis adapter): status
 * changes as they are, and the merged points of the seconds the run's meter just folded frames
 * into (runs/run-meter.ts; nothing is read or merged here). Best effort: browsers re-read the API on reconnect.
 */
export class LiveFeed {
  private readonly emitter: Emitter;

  constructor(opts: LiveFeedOptions) {
    this.emitter = new Emitter(opts.redis).of(LIVE_FEED.namespace);
  }

  status(event: Extract<RunEvent, { type: "status" }>): void {
    this.emitter.to(LIVE_FEED.room(event.runId)).emit(LIVE_FEED.events.status, event);
  }

  points(runId: string, points: IntervalPoint[]): void {
    const payload: LivePoints = { runId, points };
    this.emitter.to(LIVE_FEED.room(runId)).emit(LIVE_FEED.events.points, payload);
  }
}
