import { performance } from "node:perf_hooks";
import type { Health } from "@volley/contracts";
import { threadCpuClock, threadWaitClock } from "./thread-cpu";

const RESOLUTION_MS = 10;

/**
 * When the agent itself, not the target, is the bottleneck. Any one of these flags an interval:
 * - CPU over 90 % of one core: JavaScript runs on one thread, so this is the ceiling (in an engine
 *   worker thread, that thread's own CPU: see thread-cpu.ts).
 * - Event-loop delay p50 over 20 ms or max over 250 ms: timers (and so sends) fire late and
 *   replies wait to be read, which inflates the latency we report.
 * - Send lag over 10 ms, sustained: more than 10 % of the interval's sends, and at least 5 of them,
 *   were that late. The worst lag alone is not enough: one 30 ms GC or VM pause per second makes it
 *   exceed 10 ms on an otherwise idle agent, and a long pause is already caught by the event-loop
 *   max. The count keeps a slow interval from being judged on one sample: at 1 msg/s, the one send
 *   a VM hiccup delays would otherwise be "100 % of sends late".
 * - Any slot shed: the agent fell so far behind that it gave up on sending some messages.
 * - A closed loop (users send on replies, so there is no schedule to lag behind) whose engine
 *   thread's event loop was busy over 90 % of the interval: it hardly ever waited for the server,
 *   so replies waited for it, and the rate is the agent's. Counted in wall time, so it also catches
 *   an agent starved of its core by other processes (its CPU share reads low while the loop is
 *   still never idle). A server that is the limit leaves the loop idle waiting for its replies.
 *   Likewise a closed loop whose thread was on a CPU or waiting for one (run-queue delay) over 90 %
 *   of the interval: time a woken thread waits for its core is idle to its event loop, yet the
 *   replies that woke it wait with it.
 */
export const SATURATION = {
  cpuPercent: 90,
  eventLoopP50Ms: 20,
  eventLoopMaxMs: 250,
  sendLagMs: 10,
  lateSendShare: 0.1,
  lateSendMin: 5,
  closedLoopBusyPercent: 90,
} as const;

export interface SendLagSample {
  /** Worst send lag in the period, ms. */
  maxMs: number;
  /** Sends in the period. */
  sends: number;
  /** Of those, the ones that lagged more than SATURATION.sendLagMs. */
  late: number;
  /** Slots shed in the period (too late to send at all). */
  shed?: number;
  /** The sends were a closed loop's (each on a reply): judged by the event loop's busy share, as send lag cannot show it. */
  closedLoop?: boolean;
}

/**
 * Samples the process over consecutive periods (one per frame, or per heartbeat). Each sample
 * covers the time since the previous one.
 */
export class HealthMonitor {
  /**
   * Event-loop lag samples of the current period, ms. Measured with our own timer rather than
   * perf_hooks.monitorEventLoopDelay: on Node 20 that histogram does not record a long synchronous
   * block at all (a 400 ms busy loop shows as ~10 ms), which is exactly what must be caught.
   */
  private lags: number[] = [];
  private readonly ticker: NodeJS.Timeout;
  private lastTick = performance.now();
  /** This thread's CPU µs: the process's on the main thread, the worker's own in an engine worker. */
  private readonly cpuUs = threadCpuClock();
  private lastCpu = this.cpuUs();
  private lastAt = performance.now();
  private lastRss = 0;
  /** This thread's own event loop (a worker's is its own). */
  private lastElu = performance.eventLoopUtilization();
  /** This thread's run-queue delay, µs (undefined without Linux's schedstat). */
  private readonly waitUs = threadWaitClock();
  private lastWait = this.waitUs();

  constructor() {
    this.ticker = setInterval(() => this.tick(), RESOLUTION_MS);
    this.ticker.unref();
  }

  private tick(): void {
    const now = performance.now();
    this.lags.push(Math.max(0, now - this.lastTick - RESOLUTION_MS));
    this.lastTick = now;
  }

  sample(sendLag: SendLagSample = { maxMs: 0, sends: 0, late: 0 }): Health {
    const now = performance.now();
    const cpuNow = this.cpuUs();
    const elapsedMs = Math.max(1, now - this.lastAt);
    const cpuPercent = ((cpuNow - this.lastCpu) / 1000 / elapsedMs) * 100;
    this.lastCpu = cpuNow;
    this.lastAt = now;
    const elu = performance.eventLoopUtilization();
    const loopBusy = performance.eventLoopUtilization(elu, this.lastElu).utilization * 100;
    this.lastElu = elu;
    const waitNow = this.waitUs();
    const cpuWait = waitNow !== undefined && this.lastWait !== undefined ? Math.max(0, ((waitNow - this.lastWait) / 1000 / elapsedMs) * 100) : undefined;
    this.lastWait = waitNow;

    // A block still in progress shows as the time since the last tick.
    const lags = [...this.lags, Math.max(0, now - this.lastTick - RESOLUTION_MS)].sort((a, b) => a - b);
    this.lags = [];
    const p50 = lags[Math.floor((lags.length - 1) / 2)] ?? 0;
    const max = lags[lags.length - 1] ?? 0;

    const saturated = saturationCauses({ cpu: cpuPercent, eventLoopDelayMs: { p50, max }, loopBusy, cpuWait }, sendLag).length > 0;

    return {
      cpu: round(cpuPercent),
      eventLoopDelayMs: { p50: round(p50), max: round(max) },
      loopBusy: round(Number.isFinite(loopBusy) ? loopBusy : 0),
      ...(cpuWait !== undefined ? { cpuWait: round(cpuWait) } : {}),
      rssMb: round(this.rss() / 1_048_576),
      sendLagMaxMs: round(Math.max(0, sendLag.maxMs)),
      saturated,
    };
  }

  /**
   * rss() reads /proc/self/stat through a new fd: with every descriptor taken by connections
   * (EMFILE) it throws, and that must not kill a run at its busiest; the last reading stands in.
   */
  private rss(): number {
    try {
      return (this.lastRss = process.memoryUsage.rss());
    } catch {
      return this.lastRss;
    }
  }

  stop(): void {
    clearInterval(this.ticker);
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
const r1 = (n: number) => Math.round(n * 10) / 10;

/**
 * Which of SATURATION's limits an interval broke, in words ("CPU 97% > 90%", "12 slots shed
 * unsent"): why the agent, not the target, was the bottleneck. Empty when none did: the one
 * definition of a saturated interval (HealthMonitor flags with it, a sweep step says why with it).
 */
export function saturationCauses(
  health: Pick<Health, "cpu" | "eventLoopDelayMs" | "loopBusy" | "cpuWait">,
  sendLag: Pick<SendLagSample, "sends" | "late" | "shed" | "closedLoop">,
): string[] {
  const causes: string[] = [];
  if (health.cpu > SATURATION.cpuPercent) causes.push(`CPU ${r1(health.cpu)}% > ${SATURATION.cpuPercent}%`);
  if (health.eventLoopDelayMs.p50 > SATURATION.eventLoopP50Ms)
    causes.push(`event-loop delay p50 ${r1(health.eventLoopDelayMs.p50)} ms > ${SATURATION.eventLoopP50Ms} ms`);
  if (health.eventLoopDelayMs.max > SATURATION.eventLoopMaxMs)
    causes.push(`event-loop delay max ${r1(health.eventLoopDelayMs.max)} ms > ${SATURATION.eventLoopMaxMs} ms`);
  const lateShare = sendLag.sends > 0 ? sendLag.late / sendLag.sends : 0;
  if (sendLag.late >= SATURATION.lateSendMin && lateShare > SATURATION.lateSendShare)
    causes.push(`${Math.round(lateShare * 100)}% of sends > ${SATURATION.sendLagMs} ms late (${sendLag.late} of ${sendLag.sends})`);
  if ((sendLag.shed ?? 0) > 0) causes.push(`${sendLag.shed} slot${sendLag.shed === 1 ? "" : "s"} shed unsent`);
  if (sendLag.closedLoop && (health.loopBusy ?? 0) > SATURATION.closedLoopBusyPercent)
    causes.push(`event loop busy ${r1(health.loopBusy!)}% > ${SATURATION.closedLoopBusyPercent}% in a closed loop (replies waited for the agent)`);
  const wait = health.cpuWait ?? 0;
  if (sendLag.closedLoop && health.cpu <= SATURATION.cpuPercent && health.cpu + wait > SATURATION.closedLoopBusyPercent)
    causes.push(
      `CPU ${r1(health.cpu)}% + waiting for a CPU ${r1(wait)}% > ${SATURATION.closedLoopBusyPercent}% in a closed loop (replies waited for the agent's core)`,
    );
  return causes;
}
