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
 * - the source-address pool is shared, not duplicated: worker w's connection k binds the address
 *   connection (base_w + k) would bind in one thread (round-robin over the whole shard), so every
 *   address carries the same share as before.
 */
export function splitAcrossWorkers(plan: Plan, workers: number, shard: string, sourceAddresses: readonly string[] = []): WorkerShare[] {
  const n = plan.sweep ? 1 : Math.max(1, Math.min(Math.floor(workers), plan.connections.count));
  if (n === 1) return [{ plan, shard, sourceAddresses: [...sourceAddresses], base: 0 }];
  const plans = planShards(plan, Array.from({ length: n }, () => 1));
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
