import type { IntervalPoint, RunStatus } from "@volley/contracts";
import type { LiveFeed } from "./live-feed";

/**
 * What browsers are told of a run, through the live feed: status changes, and the merged points
 * the run's meter just folded frames into. Best effort: a lost event never fails a run (pages
 * re-read the API).
 */
export class RunEvents {
  constructor(private readonly liveFeed?: Pick<LiveFeed, "status" | "points">) {}

  async status(runId: string, status: RunStatus, reason: string | null = null): Promise<void> {
    this.liveFeed?.status({ type: "status", runId, status, reason, at: Date.now() });
  }

  readonly points = (runId: string, points: IntervalPoint[]): void => {
    this.liveFeed?.points(runId, points);
  };
}
