import { planShards, type Plan } from "@volley/contracts";

/** One worker thread's part of a shard. */
export interface WorkerShare {
  plan: Plan;
  /** Its name in group room names: the shard's, with the worker's number. */
  shard: string;
  /** The agent's source addresses, rotated so its connection k binds the one run-wide connection (base + k) would. */
  sourceAddresses: string[];
  /** Index of its first connection within the agent's shard. */
  base: number;
}

/**
 * Splits an agent's shard across `workers` threads exactly as the hub splits a run across agents
 * (planShards: connection ranges, ramp and aggregate rates, stage targets, flow rows and
 * conn.index), with three agent-level twists:
 * - a storm's canary runs in the first worker only: one agent, one canary, as with one thread;
 * - a sweep stays in one worker: each shard decides when stepping begins and judges each step on
 *   its own frames, and workers deciding apart would split one interval across two steps;
 * - so does a broadcast: a shard expects, times and counts lost only the copies of its own
 *   messages, and copies from another shard's members are counted as `remote`; split across
 *   threads, most of one agent's deliveries would go untimed;
 * - groups are split in whole groups (connection counts in multiples of the group size, the last
 *   partial group at the end as with one thread), so no group straddles two workers and every
 *   delivery stays inside one worker's accounting;
 * - the source-address pool is shared, not duplicated: worker w's connection k binds the address
 *   connection (base_w + k) would bind in one thread (round-robin over the whole shard), so every
 *   address carries the same share as before.
 */
export function splitAcrossWorkers(plan: Plan, workers: number, shard: string, sourceAddresses: readonly string[] = []): WorkerShare[] {
  const kind = plan.scenario.kind;
  const n = plan.sweep || kind === "broadcast" ? 1 : Math.max(1, Math.min(Math.floor(workers), plan.connections.count));
  if (n === 1) return [{ plan, shard, sourceAddresses: [...sourceAddresses], base: 0 }];
  const plans = planShards(
    plan,
    plan.scenario.kind === "groups" && !plan.connections.stages
      ? wholeGroups(plan.connections.count, plan.scenario.size, n)
      : Array.from({ length: n }, () => 1),
  );
  let base = 0;
  return plans.map((p, w) => {
    const share: WorkerShare = {
      plan: w > 0 && p.scenario.kind === "storm" ? { ...p, scenario: { ...p.scenario, canary: false } } : p,
      shard: `${shard}.w${w}`,
      sourceAddresses: rotate(sourceAddresses, base),
      base,
    };
    base += p.connections.count;
    return share;
  });
}

function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** Weights that give each of `n` workers whole groups of `size` (the remainder of the last group to the last worker with any). */
function wholeGroups(count: number, size: number, n: number): number[] {
  const groups = Math.ceil(count / size);
  if (groups < n) n = groups;
  const perWorker = Array.from({ length: n }, (_, w) => Math.floor(groups / n) + (w < groups % n ? 1 : 0));
  const counts = perWorker.map((g) => g * size);
  counts[n - 1] = count - counts.slice(0, n - 1).reduce((a, b) => a + b, 0);
  return counts;
}
