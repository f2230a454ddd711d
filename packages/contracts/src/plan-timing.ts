import { durationMs } from "./duration";
import type { Plan } from "./plan";
import { sweepBaseRate, sweepRates, type Stage } from "./scenario";

/**
 * How long a plan runs, phase by phase, in ms from the synchronized start instant. The one place
 * this is worked out: web's quotas, the hub's deadlines and the agent's engine all read it.
 *
 * Phases (the engine follows these; see scenario.ts for the schedule semantics):
 * - ramp: without stages, connection k is attempted at k / connections.rate s; `rampMs` is
 *   count / rate (the instant the attempt after the last would be). With stages there is no ramp:
 *   the stage line opens and closes connections.
 * - sending: `per: connection`, each connection sends for `duration` from its own open, so the last
 *   window ends at ramp + duration; `per: aggregate`, one schedule from the first open for
 *   `duration`, the shard ending no earlier than its ramp; stages: until the stages' total (a
 *   connection sends at most `duration` from its open); sweep: stepping begins on the first whole
 *   second after every connect has settled, and the last step that fits in `duration` ends it.
 * - drain: after the last send, replies and deliveries are awaited up to message.timeout.
 * - users: arrivals for `duration`, then the last users finish, within scenario.maxUserTime (the drain);
 *   with a sweep, stepping begins at the start instant (there is nothing to open first) and the
 *   last step that fits in `duration` ends the arrivals.
 *
 * `sendEndMs` is the plan's own end of sending, as if every connection opened the instant it was
 * attempted; `endByMs` is the latest a shard following the plan should end: a connection may take
 * up to `openWithinMs` to open (connect timeout, a flow's setup steps), which pushes windows that
 * run from an open, and the drain comes after.
 */
export interface PlanTiming {
  /** Without stages: count / rate, in ms; 0 with stages. */
  rampMs: number;
  /** Each stage's span: the open connections move linearly from `from` to `target` over [startMs, endMs). */
  stages: StageSpan[];
  /** With a sweep: its steps' timing, relative to the instant stepping begins. */
  sweep: SweepTiming | null;
  /** scenario.duration. */
  durationMs: number;
  /** The planned end of sending, from the start instant. */
  sendEndMs: number;
  /** How long a connection may take from its attempt to its open: the connect timeout plus a flow's setup steps. */
  openWithinMs: number;
  /** The wait for the last replies and deliveries after the last send (message.timeout). */
  drainMs: number;
  /** The latest a shard that follows the plan ends, from the start instant: sending (late opens included) plus the drain. */
  endByMs: number;
}

export interface StageSpan {
  startMs: number;
  endMs: number;
  /** Connections open at the stage's start (the previous stage's target; 0 for the first). */
  from: number;
  target: number;
}

export interface SweepTiming {
  /** Each step's warm-up (sent, not judged) before its hold; 0 without sweep.warmup. */
  warmupMs: number;
  holdMs: number;
  gapMs: number;
  /**
   * warmup + hold + gap: slot j sends from j·periodMs after stepping begins, warms up for warmupMs,
   * then holds for holdMs. A slot runs a step, or a step again (sweep.onSaturated: retry).
   */
  periodMs: number;
  /** How many slots fit in scenario.duration (a slot's warm-up and hold whole). */
  slots: number;
  /** The steps' rates, in message.per units: those the sweep allows that fit in scenario.duration. */
  rates: number[];
  /**
   * From the instant stepping begins to the end of the last hold the plan may run (0 without
   * steps): the last step's, or with onSaturated: retry, the last slot's (retries take slots).
   */
  lengthMs: number;
}

/** The plan's timing: see PlanTiming. */
export function planTiming(plan: Plan): PlanTiming {
  const duration = durationMs(plan.scenario.duration);
  if (plan.scenario.kind === "users") {
    // Users arrive for `duration`; the last may stay up to maxUserTime (its steps' own waits are inside it).
    const maxUserMs = durationMs(plan.scenario.maxUserTime);
    const sweep = plan.sweep ? sweepTiming(plan, duration) : null;
    const sendEndMs = sweep ? sweep.lengthMs : duration;
    return {
      rampMs: 0,
      stages: [],
      sweep,
      durationMs: duration,
      sendEndMs,
      openWithinMs: 0,
      drainMs: maxUserMs,
      endByMs: sendEndMs + maxUserMs,
    };
  }
  const { count, rate, stages } = plan.connections;
  const spans = stageSpans(stages ?? []);
  const rampMs = stages ? 0 : (1000 * count) / rate;
  const openWithinMs = openWithin(plan);
  const drainMs = durationMs(plan.scenario.message.timeout);
  const sweep = plan.sweep ? sweepTiming(plan, duration) : null;
  let sendEndMs: number;
  let latestMs: number;
  if (stages) {
    // Every connection stops at the stages' end; a connect still in flight then settles within openWithin.
    sendEndMs = spans.at(-1)!.endMs;
    latestMs = sendEndMs + openWithinMs;
  } else if (sweep) {
    sendEndMs = sweepBeginMs(rampMs) + sweep.lengthMs;
    latestMs = sweepBeginMs(rampMs + openWithinMs) + sweep.lengthMs;
  } else if (plan.scenario.message.per === "aggregate") {
    sendEndMs = Math.max(rampMs, duration);
    latestMs = Math.max(rampMs + openWithinMs, openWithinMs + duration);
  } else {
    sendEndMs = rampMs + duration;
    latestMs = rampMs + openWithinMs + duration;
  }
  return { rampMs, stages: spans, sweep, durationMs: duration, sendEndMs, openWithinMs, drainMs, endByMs: latestMs + drainMs };
}

/** Stepping begins on the first interval boundary (whole second from the start) at or after `settledMs`. */
export function sweepBeginMs(settledMs: number): number {
  return Math.max(0, Math.ceil(settledMs / 1000)) * 1000;
}

export function stageSpans(stages: readonly Stage[]): StageSpan[] {
  const spans: StageSpan[] = [];
  let t = 0;
  let from = 0;
  for (const s of stages) {
    const len = durationMs(s.duration);
    spans.push({ startMs: t, endMs: t + len, from, target: s.target });
    t += len;
    from = s.target;
  }
  return spans;
}

function sweepTiming(plan: Plan, duration: number): SweepTiming {
  const sweep = plan.sweep!;
  const warmupMs = durationMs(sweep.warmup ?? 0);
  const holdMs = durationMs(sweep.hold);
  const gapMs = durationMs(sweep.gap);
  const periodMs = warmupMs + holdMs + gapMs;
  // Only slots whose whole warm-up and hold fit in scenario.duration: a step is never cut short by the plan itself.
  const slots = duration < warmupMs + holdMs ? 0 : Math.floor((duration - warmupMs - holdMs) / periodMs) + 1;
  const rates = sweepRates(sweep, sweepBaseRate(plan.scenario)).slice(0, slots);
  const used = rates.length === 0 ? 0 : sweep.onSaturated === "retry" ? slots : rates.length;
  const lengthMs = used === 0 ? 0 : (used - 1) * periodMs + warmupMs + holdMs;
  return { warmupMs, holdMs, gapMs, periodMs, slots, rates, lengthMs };
}

/**
 * A connection's longest way from its attempt to its open: the connect timeout, or with a flow,
 * each setup step's own bound (an HTTP request may use the connect timeout to connect, for the
 * headers and between body chunks; a send waiting for its ack, a waitFor: their timeouts; think
 * times) plus the connect the flow adds when it names none.
 */
function openWithin(plan: Plan): number {
  const connect = durationMs(plan.target.connectTimeout);
  const setup = plan.flow?.setup ?? [];
  let ms = setup.some((s) => "connect" in s) ? 0 : connect;
  for (const step of setup) {
    if ("connect" in step) ms += connect;
    else if ("request" in step) ms += 3 * connect;
    else if ("send" in step) ms += step.send.ack ? durationMs(step.send.timeout) : 0;
    else if ("waitFor" in step) ms += durationMs(step.waitFor.timeout);
    else ms += durationMs(step.think);
  }
  return ms;
}
