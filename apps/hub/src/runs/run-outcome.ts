import type { RunStatus, RunSummary } from "@volley/contracts";
import type { EndedShard } from "../coordination/run-coordinator";

export interface ShardOutcomeInput {
  index: number;
  count: number;
  ended: EndedShard | undefined;
}

export interface RunOutcome {
  status: Extract<RunStatus, "passed" | "failed" | "errored" | "aborted">;
  reason: string | null;
}

/**
 * How a run ends, in order of precedence: a user abort; an error of the run itself (arming
 * timeout, deadline); any shard that errored (or stopped on its own); a failed threshold; passed.
 * Reasons are written for the person reading the run page.
 */
export function decideOutcome(input: {
  abort: string | null;
  runError: string | null;
  shards: readonly ShardOutcomeInput[];
  thresholds: RunSummary["thresholds"];
}): RunOutcome {
  if (input.abort) return { status: "aborted", reason: input.abort };
  if (input.runError) return { status: "errored", reason: input.runError };
  const broken = input.shards.filter((s) => s.ended && s.ended.status !== "completed");
  if (broken.length > 0) {
    const why = (s: ShardOutcomeInput) => {
      const e = s.ended!;
      const text = e.error ?? (e.status === "aborted" ? "the agent aborted the shard" : "the shard errored");
      return e.status === "aborted" && e.error ? `aborted: ${text}` : text;
    };
    if (broken.length === 1 && input.shards.length === 1) return { status: "errored", reason: why(broken[0]!) };
    return { status: "errored", reason: broken.map((s) => `shard ${s.index + 1}/${s.count}: ${why(s)}`).join("; ") };
  }
  const failed = input.thresholds.filter((t) => !t.ok);
  if (failed.length > 0) return { status: "failed", reason: failed.map((t) => t.message).join("; ") };
  return { status: "passed", reason: null };
}

/** Spread of the shards' first-interval start times (hub clock): how far apart the agents began. */
export function startSkewMs(frames: ReadonlyArray<{ shardId: string; index: number; startedAt: number }>): number | null {
  const firstByShard = new Map<string, number>();
  for (const f of frames) if (f.index === 0) firstByShard.set(f.shardId, Math.min(f.startedAt, firstByShard.get(f.shardId) ?? Infinity));
  if (firstByShard.size < 2) return null;
  const starts = [...firstByShard.values()];
  return Math.round((Math.max(...starts) - Math.min(...starts)) * 1000) / 1000;
}
