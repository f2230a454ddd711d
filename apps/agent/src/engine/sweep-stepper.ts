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
}

/**
 * A shard's sweep: once every connect has settled, stepping begins on the next interval boundary
 * (SweepPlan). Each step has its own schedule at its rate; per connection, the connections' slots
 * are phased evenly across one send interval so they do not all go at once. The interval that ends
 * a hold is judged against stopWhen on the step's own measurements (StepJudge); a broken step is
 * marked failed and ends the sweep, as do the last planned step and scenario.duration.
 */
export class SweepStepper {
  private readonly sweep: SweepPlan;
  private schedule: SendSchedule | undefined;
  private index = -1;
  private judge: StepJudge;
  private over = false;
  /** The start instant (µs, monotonic): the plan's times are offsets from it. */
  private t0 = 0;
  /** Why the sweep stopped early (a step broke stopWhen). */
  stopped: string | undefined;

  constructor(private readonly plan: Plan, private readonly host: StepperHost, private readonly random?: () => number) {
    this.sweep = new SweepPlan(plan.sweep!, plan);
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

  /** µs of [fromUs, toUs) (offsets from the start instant) inside the holds of the steps started so far: the sweep's sending time. */
  activeUs(fromUs: number, toUs: number): number {
    let us = 0;
    for (let k = 0; k <= this.index; k++) {
      us += Math.max(0, Math.min(toUs, this.sweep.holdEnd(k)) - Math.max(fromUs, this.sweep.holdStart(k)));
    }
    return us;
  }

  /** Starts the next step when the interval starting `frameUs` after the start instant is its first. */
  startDue(frameUs: number): void {
    const k = this.index + 1;
    if (!this.sweep.begun || this.over || k >= this.sweep.rates.length || frameUs < this.sweep.holdStart(k)) return;
    this.index = k;
    this.judge = new StepJudge(this.plan);
    const msg = this.plan.scenario.message;
    const intervalUs = S / this.sweep.rates[k]!;
    const start = this.t0 + this.sweep.holdStart(k), end = this.t0 + this.sweep.holdEnd(k);
    const schedule = new SendSchedule(msg.per === "connection", createArrival(msg.arrival, this.sweep.rates[k]!, this.random));
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

  /** The `step` of the interval starting `frameUs` after the start, with this body; judges the step when the interval ends its hold. */
  stepOf(frameUs: number, body: FrameBody, partial: boolean): EngineFrame["step"] {
    const k = this.sweep.stepAt(frameUs);
    if (k < 0 || k !== this.index) return undefined;
    this.judge.add(body);
    const step: NonNullable<EngineFrame["step"]> = { index: k, rate: this.sweep.rates[k]!, per: this.plan.scenario.message.per };
    if (partial || frameUs + S < this.sweep.holdEnd(k)) return step;
    const reason = this.judge.verdict(this.host.awaitedAges(this.judge.roundTrip));
    if (reason !== null) {
      step.failed = true;
      this.stopped = `step ${k} (rate ${step.rate} per ${step.per}) broke stopWhen: ${reason}`;
    }
    if (reason !== null || k === this.sweep.rates.length - 1) {
      this.over = true;
      this.schedule = undefined;
      this.host.setEnd(this.t0 + this.sweep.holdEnd(k));
    }
    return step;
  }
}
