import { flowRows } from "./flow-validation";
import type { Flow } from "./flow";
import type { Plan } from "./plan";
import { sweepBaseRate, sweepRates } from "./scenario";

/**
 * Splits `total` into parts proportional to `weights` that sum exactly to `total`, each part a
 * multiple of 1/scale (largest-remainder method: floor every share, then hand the leftover units to
 * the largest fractional remainders, ties to the earliest part so the result is deterministic).
 */
export function splitProportionally(total: number, weights: readonly number[], scale = 1): number[] {
  const units = Math.round(total * scale);
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (units * w) / weightSum);
  const parts = exact.map(Math.floor);
  let left = units - parts.reduce((a, b) => a + b, 0);
  const order = exact.map((e, i) => ({ i, rem: e - Math.floor(e) })).sort((a, b) => b.rem - a.rem || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    parts[i]! += 1;
    left -= 1;
  }
  return parts.map((p) => p / scale);
}

/**
 * Splits a rate (messages/s) in proportion to each shard's connections, exactly: whole messages per
 * second when that gives every shard a positive rate, otherwise in finer steps (1/1000, 1/10^6) so a
 * small aggregate rate over many shards still gives each shard some load.
 */
function splitRate(rate: number, weights: readonly number[]): number[] {
  for (const scale of [1, 1_000, 1_000_000]) {
    if (!Number.isInteger(Math.round(rate * scale * 1e6) / 1e6)) continue; // not representable at this step
    const parts = splitProportionally(rate, weights, scale);
    if (parts.every((p) => p > 0)) return parts;
  }
  // Rates finer than a millionth of a message per second: proportional floats are as exact as it gets.
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => (rate * w) / sum);
}

/**
 * The shard plans of a run: one per weight (an agent's capacity, see agent-selection.ts), each with
 * its slice of the connections and of an aggregate message rate in proportion to its weight,
 * summing exactly to the plan. Without weights, plan.agents.count equal shards. Per-connection
 * rates stay as written; the connection ramp rate is split in proportion so every shard ramps over
 * the same time; each stage's target and an aggregate (or users') sweep's `from` and `step` are split the same
 * way (a sweep's `until` becomes its step count, so every shard stops at the same step). A shard
 * needs at least one connection, so a plan asking for more agents than connections gets one shard
 * per connection (the first weights: pass them largest first), and a weight too small for one
 * connection of its own still gets one.
 */
export function planShards(plan: Plan, weights: readonly number[] = equalWeights(plan)): Plan[] {
  if (weights.length === 0 || weights.some((w) => !(w > 0) || !Number.isFinite(w)))
    throw new Error(`shard weights must be positive numbers, got [${weights.join(", ")}]`);
  const kept = weights.slice(0, Math.min(weights.length, plan.connections.count));
  let connections = splitProportionally(plan.connections.count, kept);
  if (connections.some((n) => n === 0)) connections = splitProportionally(plan.connections.count - kept.length, kept).map((n) => n + 1);
  const message = plan.scenario.message;
  const aggregate = message.per === "aggregate";
  const messageRates = aggregate ? splitRate(message.rate, connections) : connections.map(() => message.rate);
  const stageTargets = plan.connections.stages?.map((s) => splitProportionally(s.target, connections));
  const sweep = plan.sweep;
  const sweepSteps = sweep ? sweepRates(sweep, sweepBaseRate(plan.scenario)).length : 0;
  // Users' arrival rate is the whole run's, like an aggregate message rate.
  const splitSweep = aggregate || plan.scenario.kind === "users";
  const sweepFrom = sweep && splitSweep && sweep.from !== undefined ? splitRate(sweep.from, connections) : null;
  const sweepStep = sweep && splitSweep ? splitRate(sweep.step, connections) : null;
  // An exact count (http-rps `requests`) splits as the connections do, to the request.
  const requests = plan.scenario.kind === "http-rps" ? plan.scenario.requests : undefined;
  const requestShares = requests !== undefined ? splitProportionally(requests, connections) : null;
  // Users arrive in proportion to the users each shard may hold at once.
  const users = plan.scenario.kind === "users" ? plan.scenario : undefined;
  // Rates of 0 (a stage that stops arrivals) split as 0 everywhere.
  const splitUsers = (rate: number) => (rate === 0 ? connections.map(() => 0) : splitRate(rate, connections));
  const arrivalRates = users ? splitUsers(users.arrivalRate) : null;
  const stageRates = users?.stages?.map((st) => splitUsers(st.target));
  const bases = connections.map((_, i) => connections.slice(0, i).reduce((a, b) => a + b, 0));
  const rows = plan.flow?.data ? flowRows(plan.flow.data) : undefined;
  return connections.map((n, i) => ({
    ...plan,
    ...(plan.flow ? { flow: shardFlow(plan.flow, rows, plan.flow.indexBase ?? 0, bases[i]!, n) } : {}),
    connections: {
      ...plan.connections,
      count: n,
      rate: (plan.connections.rate * n) / plan.connections.count,
      ...(plan.connections.stages ? { stages: plan.connections.stages.map((s, k) => ({ ...s, target: stageTargets![k]![i]! })) } : {}),
    },
    scenario: {
      ...plan.scenario,
      message: { ...message, rate: messageRates[i]! },
      ...(requestShares ? { requests: requestShares[i]! } : {}),
      ...(arrivalRates ? { arrivalRate: arrivalRates[i]! } : {}),
      ...(users?.stages ? { stages: users.stages.map((st, k) => ({ ...st, target: stageRates![k]![i]! })) } : {}),
    },
    ...(sweep
      ? {
          sweep: {
            ...sweep,
            ...(sweepFrom ? { from: sweepFrom[i]! } : {}),
            ...(sweepStep ? { step: sweepStep[i]! } : {}),
            until: undefined,
            steps: Math.max(1, sweepSteps),
          },
        }
      : {}),
    agents: { ...plan.agents, count: 1 },
  }));
}

/**
 * A shard's flow: the run-wide index of its first connection (conn.index stays unique across the
 * run), and its data. Without reuse, each shard gets only its own connections' rows, so no two
 * agents ever use the same row; the slice is rotated so the agent's row pick (conn.index modulo
 * the rows it has) gives connection k run-wide row k, as one agent running the whole plan would.
 * With reuse, every shard gets every row and conn.index does the rotation. CSV is parsed here so
 * agents are sent rows. A plan already split (an agent's shard, split again across its worker
 * threads: `base` is its own indexBase) has its rows rotated the same way, so run-wide connection
 * g takes row g mod rows and the slice is read through that.
 */
function shardFlow(flow: Flow, rows: Record<string, unknown>[] | undefined, base: number, localBase: number, count: number): Flow {
  const indexBase = base + localBase;
  if (!flow.data || !rows) return { ...flow, indexBase };
  let mine = rows;
  if (!flow.data.reuse) {
    const slice =
      base === 0
        ? rows.slice(indexBase, indexBase + count)
        : Array.from({ length: Math.min(count, rows.length) }, (_, j) => rows[(indexBase + j) % rows.length]!);
    // Fewer rows than connections only passes validation with reuse; keep every row the shard has.
    mine = slice.length === 0 ? [] : slice.map((_, j) => slice[(((j - indexBase) % slice.length) + slice.length) % slice.length]!);
  }
  const { csv: _csv, ...data } = flow.data;
  return { ...flow, indexBase, data: { ...data, rows: mine as NonNullable<Flow["data"]>["rows"] } };
}

function equalWeights(plan: Plan): number[] {
  // "all" is resolved against the idle agents at run start; only a caller with their weights can plan it.
  if (plan.agents.count === "all") throw new Error('agents.count "all" needs the idle agents\' weights');
  return Array.from({ length: plan.agents.count }, () => 1);
}
