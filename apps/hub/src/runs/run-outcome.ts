import { unjudgedCapacityReason, type AgentLossPolicy, type Capacity, type RunStatus, type RunSummary, type StartReport } from "@volley/contracts";
import type { EndedShard, StartedShard } from "../coordination/run-coordinator";

export interface ShardOutcomeInput {
  index: number;
  count: number;
  ended: EndedShard | undefined;
}

export interface RunOutcome {
  status: Extract<RunStatus, "passed" | "failed" | "errored" | "aborted" | "degraded" | "inconclusive">;
  reason: string | null;
}

const shardLabel = (s: ShardOutcomeInput) => `shard ${s.index + 1}/${s.count}`;

/**
 * How a run ends, in order of precedence: a user abort; an error of the run itself (arming
 * timeout, deadline, a lost agent under onLoss "error"); an abortOnFail threshold that stopped the
 * run early (failed: the shards it stopped are not errors); any shard that errored (or stopped on its
 * own) — except that under onLoss "degrade", shards whose agent was lost while others completed
 * make the run degraded; a failed threshold; inconclusive; passed. Reasons are written for the
 * person reading the run page. A capacity search none of whose steps could be judged (the load
 * generator limited the first, or it was cut short) found nothing either way: inconclusive, never a
 * pass. One that ended at a step the load generator limited after others held passes, and says its
 * capacity is only a lower bound (webhooks and the CLI carry the reason).
 */
export function decideOutcome(input: {
  abort: string | null;
  runError: string | null;
  shards: readonly ShardOutcomeInput[];
  thresholds: RunSummary["thresholds"];
  onLoss?: AgentLossPolicy;
  /** Why an abortOnFail threshold stopped the run while it ran. */
  thresholdStop?: string | null;
  /** The summary's capacity (sweeps with stopWhen). */
  capacity?: Capacity;
}): RunOutcome {
  if (input.abort) return { status: "aborted", reason: input.abort };
  if (input.runError) return { status: "errored", reason: input.runError };
  if (input.thresholdStop) return { status: "failed", reason: input.thresholdStop };
  const failed = input.thresholds.filter((t) => !t.ok);
  const broken = input.shards.filter((s) => s.ended && s.ended.status !== "completed");
  if (broken.length > 0) {
    const completed = input.shards.filter((s) => s.ended?.status === "completed").length;
    if (input.onLoss === "degrade" && completed > 0 && broken.every((s) => s.ended!.lost)) {
      const lost = broken.map((s) => `${shardLabel(s)}: ${s.ended!.error ?? "agent lost"}`).join("; ");
      const rest = `the other agents finished ${completed} of ${input.shards.length} shards (agents.onLoss: degrade)`;
      // Thresholds judged on less load than planned are reported, but they are not the verdict.
      const judged = failed.length > 0 ? `; thresholds on the reduced load: ${failed.map((t) => t.message).join("; ")}` : "";
      return { status: "degraded", reason: `${lost}; ${rest}${judged}` };
    }
    const why = (s: ShardOutcomeInput) => {
      const e = s.ended!;
      const text = e.error ?? (e.status === "aborted" ? "the agent aborted the shard" : "the shard errored");
      return e.status === "aborted" && e.error ? `aborted: ${text}` : text;
    };
    if (broken.length === 1 && input.shards.length === 1) return { status: "errored", reason: why(broken[0]!) };
    return { status: "errored", reason: broken.map((s) => `${shardLabel(s)}: ${why(s)}`).join("; ") };
  }
  if (failed.length > 0) return { status: "failed", reason: failed.map((t) => t.message).join("; ") };
  const c = input.capacity;
  const unjudged = c && unjudgedCapacityReason(c);
  if (unjudged) return { status: "inconclusive", reason: unjudged };
  if (c?.agentSaturated) {
    const floor = c.rate === null ? "unknown" : `at least ${c.rate}/s per ${c.per}`;
    return {
      status: "passed",
      reason: `capacity ${floor}, a lower bound: ${c.endedBy ?? "the search ended at a step the load generator limited"}; add agents and rerun`,
    };
  }
  return { status: "passed", reason: null };
}

/**
 * Under onLoss "error" (the default): the reason to stop a started run because an agent was lost,
 * or null. The other agents are stopped rather than left loading a target for a run that already errored.
 */
export function lossStopReason(shards: readonly ShardOutcomeInput[], onLoss: AgentLossPolicy | undefined): string | null {
  if ((onLoss ?? "error") !== "error") return null;
  const lost = shards.filter((s) => s.ended?.lost);
  if (lost.length === 0) return null;
  if (shards.length === 1) return lost[0]!.ended!.error ?? "agent lost";
  const text = lost.map((s) => `${shardLabel(s)}: ${s.ended!.error ?? "agent lost"}`).join("; ");
  return `${text}; the other agents were stopped (agents.onLoss: error; "degrade" would let them finish)`;
}

/** Spread of the shards' first-interval start times (hub clock): how far apart the agents began. */
export function startSkewMs(frames: ReadonlyArray<{ shardId: string; index: number; startedAt: number }>): number | null {
  const firstByShard = new Map<string, number>();
  for (const f of frames) if (f.index === 0) firstByShard.set(f.shardId, Math.min(f.startedAt, firstByShard.get(f.shardId) ?? Infinity));
  if (firstByShard.size < 2) return null;
  const starts = [...firstByShard.values()];
  return Math.round((Math.max(...starts) - Math.min(...starts)) * 1000) / 1000;
}

const ms3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * The measured start from the agents' own reports (shard.started): each shard's actual start vs
 * the planned instant, and the spread across shards. Null when no shard reported (agents from
 * before the report, or a run that never started).
 */
export function startReport(shards: ReadonlyArray<{ id: string; index: number }>, started: ReadonlyMap<string, StartedShard>): StartReport | null {
  const rows = shards.flatMap((sh) => {
    const s = started.get(sh.id);
    return s
      ? [
          {
            index: sh.index,
            agentId: s.agentId,
            agentName: s.agentName,
            startedAt: s.startedAt,
            lateMs: ms3(s.startedAt - s.plannedAt),
            plannedAt: s.plannedAt,
          },
        ]
      : [];
  });
  if (rows.length === 0) return null;
  const starts = rows.map((r) => r.startedAt);
  return {
    plannedAt: rows[0]!.plannedAt,
    skewMs: rows.length < 2 ? null : ms3(Math.max(...starts) - Math.min(...starts)),
    maxLateMs: Math.max(...rows.map((r) => r.lateMs)),
    shards: rows.map(({ plannedAt: _p, ...r }) => r),
  };
}
