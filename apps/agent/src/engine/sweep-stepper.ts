import type { Plan } from "@volley/contracts";
import { createArrival } from "./arrival";
import { SendSchedule } from "./send-schedule";
import type { SlotSink } from "./send-turn";
import { StepJudge, SweepPlan } from "./sweep-plan";
import type { EngineFrame } from "./types";

const S = 1_000_000;

type FrameBody = { counters: Record<string, number>; histograms: Record<string, string> };

/** What the stepper needs of its shard engine. */
export interface StepperHost {
  /** Ids of the crowd's open connections. */
  openIds(): number[];
  /** Adds a schedule's slots (from, until, at intervalUs) to the expected count. */
  addExpected(fromUs: number, untilUs: number, intervalUs: number): void;
  /** The run now ends here (stepping began, or stopped early). */
  setEnd(endUs: number): void;
  /** Ages of the round trips (or deliveries) still awaited, µs. */
  awaitedAges(roundTrip: boolean): number[];
  /**
   * Users: the slot's arrivals at `rate` users/s over [fromUs, untilUs) (µs monotonic), in place of
   * a send schedule (the stepper then schedules no sends of its own).
   */
  startArrivals?(rate: number, fromUs: number, untilUs: number): void;
}

/**
 * A shard's sweep: once every connect has settled, stepping begins on the next interval boundary
 * (SweepPlan). Each step has its own schedule at its rate, from its warm-up to the end of its hold;
 * per connection, the connections' slots are phased evenly across one send interval so they do not
 * all go at once. The interval that ends a hold is judged on the hold's own measurements
 * (StepJudge). A step in which the agent flagged itself saturated was limited by the load
 * generator: it is marked so (step.generatorLimited, with why) and never judged against stopWhen;
 * per sweep.onSaturated it stops the sweep, or runs again in the next slot (its frames then carry
 * `attempt`). A step that broke stopWhen is marked failed and ends the sweep, as do the last planned
 * step and the last slot that fits in scenario.duration.
 */
export class SweepStepper {
  private readonly sweep: SweepPlan;
  private schedule: SendSchedule | undefined;
  /** The current slot, and the step (and attempt) it runs; `next`: what the next slot runs. */
  private index = -1;
  private current = { step: 0, attempt: 0 };
  private next = { step: 0, attempt: 0 };
  private judge: StepJudge;
  private over = false;
  /** The start instant (µs, monotonic): the plan's times are offsets from it. */
  private t0 = 0;
  /** Why the sweep stopped early (a step broke stopWhen). */
  stopped: string | undefined;

  constructor(
    private readonly plan: Plan,
    private readonly host: StepperHost,
    private readonly random?: () => number,
  ) {
    this.sweep = new SweepPlan(plan);
    this.judge = new StepJudge(plan);
  }

  get begun(): boolean {
    return this.sweep.begun;
  }

  /** Every connect has settled at `nowUs`: fixes the first step's start and the run's planned end. */
  begin(t0Us: number, nowUs: number): void {
    this.t0 = t0Us;
    this.sweep.begin(nowUs - t0Us);
    const last = this.sweep.rates.length - 1;
    this.host.setEnd(last >= 0 ? t0Us + this.sweep.holdEnd(last) : nowUs);
  }

  due(nowUs: number, sink: SlotSink): void {
    this.schedule?.due(nowUs, sink);
  }

  nextDue(): number {
    return this.schedule?.nextDue() ?? Infinity;
  }

  close(id: number): void {
    this.schedule?.close(id);
  }

  /** µs of [fromUs, toUs) (offsets from the start instant) inside the warm-ups and holds of the slots started so far: the sweep's sending time. */
  activeUs(fromUs: number, toUs: number): number {
    let us = 0;
    for (let j = 0; j <= this.index; j++) {
      us += Math.max(0, Math.min(toUs, this.sweep.holdEnd(j)) - Math.max(fromUs, this.sweep.sendStart(j)));
    }
    return us;
  }

  /** Whether the interval starting `frameUs` after the start instant is a step's warm-up (sent, not judged). */
  warmingUp(frameUs: number): boolean {
    return this.sweep.slotAt(frameUs) === this.index && this.sweep.warmingUp(frameUs);
  }

  /** Starts the next slot when the interval starting `frameUs` after the start instant is its first. */
  startDue(frameUs: number): void {
    const j = this.index + 1;
    if (!this.sweep.begun || this.over || j >= this.sweep.slots || this.next.step >= this.sweep.rates.length || frameUs < this.sweep.sendStart(j)) return;
    this.index = j;
    this.current = this.next;
    this.judge = new StepJudge(this.plan);
    const msg = this.plan.scenario.message;
    const rate = this.sweep.rates[this.current.step]!;
    const intervalUs = S / rate;
    const start = this.t0 + this.sweep.sendStart(j),
      end = this.t0 + this.sweep.holdEnd(j);
    if (this.host.startArrivals) return this.host.startArrivals(rate, start, end);
    const schedule = new SendSchedule(msg.per === "connection", createArrival(msg.arrival, rate, this.random));
    schedule.endUs = end;
    const open = this.host.openIds();
    if (msg.per === "connection") {
      open.forEach((id, j) => {
        const from = start + (j / open.length) * intervalUs;
        schedule.open(id, from);
        this.host.addExpected(from, end, intervalUs);
      });
    } else if (open.length > 0) {
      for (const id of open) schedule.open(id, start);
      this.host.addExpected(start, end, intervalUs);
    }
    this.schedule = schedule;
  }

  /**
   * The `step` of the interval starting `frameUs` after the start, with this body and the agent's
   * saturation verdict on it; judges the step when the interval ends its hold. Warm-up intervals
   * have no step (see warmingUp).
   */
  stepOf(frameUs: number, body: FrameBody, partial: boolean, saturation?: { saturated: boolean; causes: readonly string[] }): EngineFrame["step"] {
    const j = this.sweep.stepAt(frameUs);
    if (j < 0 || j !== this.index) return undefined;
    this.judge.add(body, saturation);
    const { step: k, attempt } = this.current;
    const step: NonNullable<EngineFrame["step"]> = {
      index: k,
      rate: this.sweep.rates[k]!,
      // Users arrive at the run's rate, split across agents as an aggregate message rate is.
      per: this.plan.scenario.kind === "users" ? "aggregate" : this.plan.scenario.message.per,
      ...(attempt > 0 ? { attempt } : {}),
    };
    if (partial || frameUs + S < this.sweep.holdEnd(j)) return step;
    const limited = this.judge.generatorLimit();
    const reason = this.judge.verdict(this.host.awaitedAges(this.judge.roundTrip));
    const label = this.plan.scenario.kind === "users" ? `step ${k} (${step.rate} users/s)` : `step ${k} (rate ${step.rate} per ${step.per})`;
    let next: { step: number; attempt: number } | undefined = { step: k + 1, attempt: 0 };
    if (limited !== null) {
      // The generator, not the server, set this step's figures: neither a pass nor a break of stopWhen.
      step.generatorLimited = limited;
      const onSaturated = this.plan.sweep!.onSaturated ?? "stop";
      const retries = this.plan.sweep!.retries ?? 1;
      if (onSaturated === "retry" && attempt < retries && j + 1 < this.sweep.slots) next = { step: k, attempt: attempt + 1 };
      else {
        next = undefined;
        const tried =
          onSaturated !== "retry"
            ? ""
            : attempt < retries
              ? ", and no slot is left in scenario.duration to retry it"
              : `, still so after ${attempt} ${attempt === 1 ? "retry" : "retries"}`;
        const also = reason === null ? "" : `; its stopWhen figures (${reason}) are the agent's as much as the server's`;
        this.stopped = `${label} was limited by the agent, not the server (${limited})${tried}${also}; the sweep stops (sweep.onSaturated: ${onSaturated}): add agents or lower the rates`;
      }
    } else if (reason !== null) {
      step.failed = true;
      this.stopped = `${label} broke stopWhen: ${reason}`;
      next = undefined;
    }
    if (next && (next.step >= this.sweep.rates.length || j + 1 >= this.sweep.slots)) next = undefined;
    if (!next) {
      this.over = true;
      this.schedule = undefined;
      this.host.setEnd(this.t0 + this.sweep.holdEnd(j));
    } else {
      this.next = next;
      // A retry takes a slot: the steps left end one slot later (as far as scenario.duration allows).
      if (next.attempt > 0) this.host.setEnd(this.t0 + this.sweep.holdEnd(Math.min(this.sweep.slots - 1, j + this.sweep.rates.length - next.step)));
    }
    return step;
  }
}
