import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { REDIS_KEYS, type RunEvent, type RunStatus } from "@volley/contracts";
import { errorMessage } from "../util/wait";

/** Publishes run updates for the live feed. Best effort: a lost event never fails a run. */
export class RunEvents {
  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
    private readonly liveFeed?: { publish(event: RunEvent): void },
  ) {}

  private publish(event: RunEvent): Promise<void> {
    this.liveFeed?.publish(event);
    return this.redis.publish(REDIS_KEYS.runEvents(event.runId), JSON.stringify(event)).then(
      () => undefined,
      (err) => this.log.warn({ runId: event.runId, err: errorMessage(err) }, "could not publish run event"),
    );
  }

  status(runId: string, status: RunStatus, reason: string | null = null): Promise<void> {
    return this.publish({ type: "status", runId, status, reason, at: Date.now() });
  }

  intervals(runId: string, stored: number): Promise<void> {
    return this.publish({ type: "intervals", runId, stored, at: Date.now() });
  }
}
