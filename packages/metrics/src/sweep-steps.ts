import { COUNTERS, HISTOGRAMS, durationMs, errorCount, type Capacity, type Plan, type SweepStep } from "@volley/contracts";
import type { FrameLike } from "./aggregate";
import { addEncoded, createHistogram, type Histogram } from "./histogram";
import { describeStopWhen, stopReason } from "./stop-condition";
import { latencySummary } from "./summary";

/** What the step summary needs of the plan: the sweep (hold, stop condition) and whether the main latency is a round trip. */
export type SweepContext = Pick<Plan, "sweep" | "scenario">;

/** Round trip is the main measure when the scenario has one; groups (and broadcast without echo) have deliveries only. */
export function mainLatencyMetric(scenario: Plan["scenario"]): string {
  if (scenario.kind === "groups" || (scenario.kind === "broadcast" && !scenario.echo)) return HISTOGRAMS.deliveryLatency;
  return HISTOGRAMS.messageLatency;
}

/** Whether histogram `name` is the scenario's main latency: for users, every timed step (`step.<name>`). */
export function isMainLatency(scenario: Plan["scenario"], name: string): boolean {
  return scenario.kind === "users" ? name.startsWith(STEP_PREFIX) : name === mainLatencyMetric(scenario);
}

const STEP_PREFIX = "step.";

const sum = (frames: readonly FrameLike[], name: string) => frames.reduce((n, f) => n + (f.counters[name] ?? 0), 0);
const errorsOf = (frames: readonly FrameLike[]) => frames.reduce((n, f) => n + errorCount(f.counters), 0);
const round = (n: number) => Math.round(n * 100) / 100;

function merge(frames: readonly FrameLike[], name: string | ((name: string) => boolean)): Histogram | undefined {
  let h: Histogram | undefined;
  for (const f of frames) {
    for (const [k, b64] of Object.entries(f.histograms)) {
      if (!b64 || (typeof name === "string" ? k !== name : !name(k))) continue;
      h ??= createHistogram(64);
      addEncoded(h, b64);
    }
  }
  return h;
}

/**
 * One record per sweep step from the frames marked with it (every shard's frames merged exactly).
 * With the plan, a step also fails when the merged measurements break stopWhen, and counts as
 * aborted when its hold was cut short; without it, only the shards' own verdicts are known.
 */
export function summarizeSteps(frames: readonly FrameLike[], ctx?: SweepContext): SweepStep[] {
  const byStep = new Map<number, FrameLike[]>();
  for (const f of frames) {
    if (!f.step) continue;
    const list = byStep.get(f.step.index);
    if (list) list.push(f);
    else byStep.set(f.step.index, [f]);
  }
  // A retried step (sweep.onSaturated: retry) is measured by its last run; the run before says why it was retried.
  const retried = new Map<number, { attempts: number; reason: string | null }>();
  for (const [index, all] of byStep) {
    const last = Math.max(...all.map((f) => f.step!.attempt ?? 0));
    if (last === 0) continue;
    const before = all.filter((f) => (f.step!.attempt ?? 0) === last - 1);
    retried.set(index, { attempts: last + 1, reason: before.find((f) => f.step!.generatorLimited)?.step?.generatorLimited ?? null });
    byStep.set(
      index,
      all.filter((f) => (f.step!.attempt ?? 0) === last),
    );
  }
  const holdSeconds = ctx?.sweep ? durationMs(ctx.sweep.hold) / 1000 : undefined;
  const main = ctx ? mainLatencyMetric(ctx.scenario) : HISTOGRAMS.messageLatency;
  return [...byStep.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, list]) => {
      const per = list[0]!.step!.per;
      // Per interval: shards' aggregate rates add up; a per-connection rate is the same on every shard.
      const byIndex = new Map<number, FrameLike[]>();
      for (const f of list) byIndex.set(f.index, [...(byIndex.get(f.index) ?? []), f]);
      let plannedRate = 0;
      let seconds = 0;
      for (const group of byIndex.values()) {
        const rates = group.map((f) => f.step!.rate);
        plannedRate = Math.max(plannedRate, per === "aggregate" ? rates.reduce((a, b) => a + b, 0) : Math.max(...rates));
        seconds += Math.max(...group.map((f) => f.activeMs ?? f.durationMs)) / 1000;
      }
      const users = ctx?.scenario.kind === "users" ? usersOf(list) : undefined;
      const latency = users ? merge(list, (k) => isMainLatency(ctx!.scenario, k)) : merge(list, HISTOGRAMS.messageLatency);
      const delivery = merge(list, HISTOGRAMS.deliveryLatency);
      const sent = sum(list, COUNTERS.sent);
      const received = sum(list, COUNTERS.received);
      const lost = sum(list, COUNTERS.lost);
      const errors = errorsOf(list);
      const disconnects = sum(list, COUNTERS.connectionsDropped);
      const delivered = sum(list, COUNTERS.deliveriesReceived);
      const merged = stopReason(ctx?.sweep?.stopWhen, {
        latency: main === HISTOGRAMS.deliveryLatency ? delivery : latency,
        sent,
        lost,
        deliveriesExpected: sum(list, COUNTERS.deliveriesExpected),
        deliveriesLost: sum(list, COUNTERS.deliveriesLost),
        errors,
        disconnects,
        ...(users ? { usersLeft: users.completed + users.failed, usersFailed: users.failed } : {}),
      });
      const shardFailed = list.some((f) => f.step!.failed);
      // Agents that mark the step say why; a saturated frame from an older agent still limits it.
      const saturated = list.some((f) => f.health.saturated);
      const limitedBy =
        list.find((f) => f.step!.generatorLimited)?.step?.generatorLimited ?? (saturated ? "an agent reported itself saturated during the hold" : null);
      const retry = retried.get(index);
      return {
        index,
        plannedRate: round(plannedRate),
        per,
        startedAt: Math.min(...list.map((f) => f.startedAt)),
        seconds: round(seconds),
        sent,
        received,
        lost,
        errors,
        disconnects,
        sendRate: seconds > 0 ? round(sent / seconds) : 0,
        receiveRate: seconds > 0 ? round(received / seconds) : 0,
        deliveryRate: seconds > 0 ? round(delivered / seconds) : 0,
        latency: latencySummary(latency),
        delivery: latencySummary(delivery),
        saturated,
        failed: merged !== null || shardFailed,
        aborted: holdSeconds !== undefined ? seconds < holdSeconds - 0.001 : list.some((f) => f.durationMs < 1000),
        reason: merged ?? (shardFailed ? "an agent's own measurements broke the stop condition" : null),
        generatorLimited: limitedBy !== null,
        generatorReason: limitedBy,
        ...(retry ? { attempts: retry.attempts, retryReason: retry.reason } : {}),
        ...(users ? { users } : {}),
      };
    });
}

/**
 * The highest planned rate that held, counting steps in order up to the first that failed, was cut
 * short, or was limited by the load generator. A step the generator limited decides nothing: the
 * search ends there with the rate before it as a lower bound.
 */
export function capacityOf(steps: readonly SweepStep[], ctx: SweepContext | undefined): Capacity | undefined {
  const stopWhen = ctx?.sweep?.stopWhen;
  if (!stopWhen || steps.length === 0) return undefined;
  let best: SweepStep | undefined;
  let broke: SweepStep | undefined;
  let limited: SweepStep | undefined;
  for (const s of steps) {
    if (s.generatorLimited) {
      limited = s;
      break;
    }
    if (s.failed) broke = s;
    if (s.failed || s.aborted) break;
    best = s;
  }
  // Named by rate: the CLIs number steps from 0, the run page from 1.
  const label = (s: SweepStep) => (s.users ? `the step at ${s.plannedRate} users/s` : `the step at ${s.plannedRate}/s per ${s.per}`);
  const endedBy = limited
    ? `${label(limited)} was limited by the load generator, not the server (${limited.generatorReason ?? "an agent was saturated"})`
    : broke
      ? `${label(broke)} broke it: ${broke.reason ?? "limit broken"}`
      : null;
  return {
    slo: describeStopWhen(stopWhen),
    rate: best?.plannedRate ?? null,
    per: steps[0]!.per,
    sendRate: best?.sendRate ?? null,
    deliveryRate: best?.deliveryRate ?? null,
    step: best?.index ?? null,
    // Never broken on the server's account: the last rate that held is a floor of the capacity, not the capacity.
    lowerBound: broke === undefined && best !== undefined,
    agentSaturated: limited !== undefined,
    endedBy,
  };
}

function usersOf(frames: readonly FrameLike[]): NonNullable<SweepStep["users"]> {
  return {
    started: sum(frames, COUNTERS.usersStarted),
    completed: sum(frames, COUNTERS.usersCompleted),
    failed: sum(frames, COUNTERS.usersFailed),
    dropped: sum(frames, COUNTERS.usersDropped),
  };
}
