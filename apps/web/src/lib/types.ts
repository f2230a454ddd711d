import type { RunQueue, RunStatus } from "@volley/contracts";

/** One row of `GET /api/v1/runs`: enough for a list, without the plan document. */
export interface RunListItem {
  id: string;
  name: string;
  status: RunStatus;
  reason: string | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** While queued: its place in the pool's line. */
  queue?: RunQueue | null;
  /**
   * From the stored summary; null until the run has finished with measurements. `measure` says what
   * received and the percentiles count: round trips, or deliveries for runs without round trips.
   */
  summary: {
    measure: "round trip" | "delivery";
    sent: number;
    received: number;
    lost: number;
    p50: number | null;
    p95: number | null;
    p99: number | null;
  } | null;
  /** The saved plan it ran (null: an inline plan). */
  planId: string | null;
  tags: string[];
  /** It is its plan's baseline. */
  baseline: boolean;
}

/** `POST /api/v1/runs/{id}/abort` → 202. */
export interface AbortResponse {
  id: string;
  /** `aborted` when the run was still queued; `running` while the hub stops it. */
  status: RunStatus;
  abort: "done" | "requested";
}
