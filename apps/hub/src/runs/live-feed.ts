import { Emitter } from "@socket.io/redis-emitter";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { FINAL_RUN_STATUSES, LIVE_FEED, type LivePoints, type RunEvent } from "@volley/contracts";
import { listFramesSince, type Db } from "@volley/db";
import { mergeTimeline } from "@volley/metrics";
import { errorMessage } from "../util/wait";

export interface LiveFeedOptions {
  db: Db;
  /** Any command connection: the emitter only PUBLISHes. */
  redis: Redis;
  log: Logger;
}

interface RunCursor {
  lastId: number;
  busy: boolean;
  /** Frames were stored while a read was in flight: read again when it ends. */
  again: boolean;
}

/**
 * Pushes run updates to browsers through web's Socket.IO namespace /live, with the Redis emitter
 * (no socket server here: web's servers pick the broadcast up through their Redis adapter). Status
 * changes go out as they are; "intervals stored" becomes the merged timeline points of every second
 * the new frames touched. Best effort, like RunEvents: browsers re-read the API on reconnect.
 */
export class LiveFeed {
  private readonly emitter: Emitter;
  private readonly cursors = new Map<string, RunCursor>();

  constructor(private readonly opts: LiveFeedOptions) {
    this.emitter = new Emitter(opts.redis).of(LIVE_FEED.namespace);
  }

  publish(event: RunEvent): void {
    if (event.type === "status") {
      this.emitter.to(LIVE_FEED.room(event.runId)).emit(LIVE_FEED.events.status, event);
      if (FINAL_RUN_STATUSES.includes(event.status)) this.cursors.delete(event.runId);
      return;
    }
    void this.pushPoints(event.runId);
  }

  /** Resolves when no read is in flight (tests). */
  async idle(): Promise<void> {
    while ([...this.cursors.values()].some((c) => c.busy)) await new Promise((r) => setTimeout(r, 10));
  }

  private async pushPoints(runId: string): Promise<void> {
    let cursor = this.cursors.get(runId);
    if (!cursor) this.cursors.set(runId, (cursor = { lastId: 0, busy: false, again: false }));
    if (cursor.busy) {
      cursor.again = true;
      return;
    }
    cursor.busy = true;
    try {
      do {
        cursor.again = false;
        const { frames, lastId } = await listFramesSince(this.opts.db, runId, cursor.lastId);
        cursor.lastId = lastId;
        if (frames.length === 0) continue;
        const payload: LivePoints = { runId, points: mergeTimeline(frames) };
        this.emitter.to(LIVE_FEED.room(runId)).emit(LIVE_FEED.events.points, payload);
      } while (cursor.again);
    } catch (err) {
      this.opts.log.warn({ runId, err: errorMessage(err) }, "could not push live points");
    } finally {
      cursor.busy = false;
    }
  }
}
