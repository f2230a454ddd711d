import { Emitter } from "@socket.io/redis-emitter";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { FINAL_RUN_STATUSES, LIVE_FEED, type LivePoints, type RunEvent } from "@volley/contracts";
import { listFramesAfter, listFramesAtIndexes, type Db } from "@volley/db";
import { IntervalMerger } from "@volley/metrics";
import { errorMessage } from "../util/wait";

export interface LiveFeedOptions {
  db: Db;
  /** Any command connection: the emitter only PUBLISHes. */
  redis: Redis;
  log: Logger;
}

/** Seconds kept merged in memory behind the newest one; a frame for an older second rebuilds it from the database. */
const WINDOW = 30;
/** At most this often per run: the aggregator stores a second's frames in several batches; browsers need one update. */
const MIN_PUSH_GAP_MS = 250;

interface RunCursor {
  lastId: number;
  lastPushAt: number;
  /** Merged state of the recent seconds: each frame is decoded and added once, not re-merged per push. */
  mergers: Map<number, IntervalMerger>;
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
    if (!cursor) this.cursors.set(runId, (cursor = { lastId: 0, lastPushAt: 0, mergers: new Map(), busy: false, again: false }));
    if (cursor.busy) {
      cursor.again = true;
      return;
    }
    cursor.busy = true;
    try {
      do {
        const wait = cursor.lastPushAt + MIN_PUSH_GAP_MS - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait)); // events meanwhile coalesce into this read
        cursor.again = false;
        cursor.lastPushAt = Date.now();
        const frames = await listFramesAfter(this.opts.db, runId, cursor.lastId);
        if (frames.length === 0) continue;
        const upToId = frames.at(-1)!.id;
        if (frames.length === 5000) cursor.again = true; // more than one read's worth is waiting
        const touched = new Set(frames.map((f) => f.index));
        const missing = [...touched].filter((i) => !cursor.mergers.has(i));
        // A second not in memory (first read, evicted, hub restarted) is rebuilt from all its stored frames.
        const rebuilt = await listFramesAtIndexes(this.opts.db, runId, missing, upToId);
        for (const i of missing) cursor.mergers.set(i, new IntervalMerger(i));
        for (const f of rebuilt) cursor.mergers.get(f.index)!.add(f);
        const fresh = new Set(missing);
        for (const f of frames) if (!fresh.has(f.index)) cursor.mergers.get(f.index)!.add(f);
        cursor.lastId = upToId;
        const points = [...touched].sort((a, b) => a - b).map((i) => cursor.mergers.get(i)!.point());
        const newest = Math.max(...cursor.mergers.keys());
        for (const i of cursor.mergers.keys()) if (i < newest - WINDOW) cursor.mergers.delete(i);
        const payload: LivePoints = { runId, points };
        this.emitter.to(LIVE_FEED.room(runId)).emit(LIVE_FEED.events.points, payload);
      } while (cursor.again);
    } catch (err) {
      cursor.mergers.clear(); // possibly half-updated: rebuilt from the database on the next push
      this.opts.log.warn({ runId, err: errorMessage(err) }, "could not push live points");
    } finally {
      cursor.busy = false;
    }
  }
}
