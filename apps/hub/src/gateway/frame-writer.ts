import type { Redis } from "ioredis";
import { REDIS_KEYS } from "@volley/contracts";

interface Pending {
  runId: string;
  body: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Appends agents' frames to their runs' Redis streams, one transaction per `gatherMs` rather than
 * per frame. Agents send a second's frames within a few hundred milliseconds of each other; writing
 * each on its own cost one socket write (and a Redis wake-up) per frame, the largest single share
 * of the hub's CPU at 100 agents (bench/hub-aggregation.ts), since a write costs tens of µs of
 * syscall whatever its size. Each caller still learns whether its own frame was stored before it
 * acknowledges it; an acknowledgement waits at most `gatherMs` longer.
 */
export class FrameWriter {
  /** Frames waiting for the next flush; a flush is scheduled exactly while this is not empty. */
  private queue: Pending[] = [];

  constructor(
    private readonly redis: Redis,
    private readonly gatherMs = 20,
  ) {}

  /** Resolves once the frame is in its run's stream (and the run marked active); rejects if not. */
  append(runId: string, body: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.queue.push({ runId, body, resolve, reject }) === 1) setTimeout(() => void this.flush(), this.gatherMs);
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    const tx = this.redis.multi();
    for (const p of batch) tx.xadd(REDIS_KEYS.frames(p.runId), "*", "f", p.body);
    const runs = [...new Set(batch.map((p) => p.runId))];
    tx.sadd(REDIS_KEYS.activeRuns, ...runs);
    try {
      const results = await tx.exec();
      if (!results) throw new Error("transaction discarded");
      const setFailed = results.at(-1)?.[0];
      batch.forEach((p, i) => {
        const err = results[i]?.[0] ?? setFailed;
        if (err) p.reject(err);
        else p.resolve();
      });
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}
