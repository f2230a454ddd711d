import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import type { Health } from "@volley/contracts";

const RESOLUTION_MS = 10;

/**
 * When the agent itself, not the target, is the bottleneck. Any one of these flags an interval:
 * - CPU over 90 % of one core: JavaScript runs on one thread, so this is the ceiling.
 * - Event-loop delay p50 over 20 ms or max over 250 ms: timers (and so sends) fire late and
 *   replies wait to be read, which inflates the latency we report.
 * - Send lag over 10 ms, sustained: more than 10 % of the interval's sends were that late. The
 *   worst lag alone is not enough: one 30 ms GC or VM pause per second makes it exceed 10 ms on
 *   an otherwise idle agent, and a long pause is already caught by the event-loop max.
 */
export const SATURATION = {
  cpuPercent: 90,
  eventLoopP50Ms: 20,
  eventLoopMaxMs: 250,
  sendLagMs: 10,
  lateSendShare: 0.1,
} as const;

export interface SendLagSample {
  /** Worst send lag in the period, ms. */
  maxMs: number;
  /** Fraction of the period's sends that lagged more than SATURATION.sendLagMs. */
  lateShare: number;
}

/**
 * Samples the process over consecutive periods (one per frame, or per heartbeat). Each sample
 * covers the time since the previous one.
 */
export class HealthMonitor {
  private readonly eld: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private lastCpu = process.cpuUsage();
  private lastAt = performance.now();

  constructor() {
    this.eld.enable();
  }

  sample(sendLag: SendLagSample = { maxMs: 0, lateShare: 0 }): Health {
    const now = performance.now();
    const cpu = process.cpuUsage(this.lastCpu);
    const elapsedMs = Math.max(1, now - this.lastAt);
    this.lastCpu = process.cpuUsage();
    this.lastAt = now;

    const cpuPercent = ((cpu.user + cpu.system) / 1000 / elapsedMs) * 100;
    // The histogram records whole timer periods; the delay is what exceeds the period.
    const beyond = (ns: number) => (this.eld.count > 0 ? Math.max(0, ns / 1e6 - RESOLUTION_MS) : 0);
    const p50 = beyond(this.eld.percentile(50));
    const max = beyond(this.eld.max);
    this.eld.reset();

    const saturated =
      cpuPercent > SATURATION.cpuPercent ||
      p50 > SATURATION.eventLoopP50Ms ||
      max > SATURATION.eventLoopMaxMs ||
      sendLag.lateShare > SATURATION.lateSendShare;

    return {
      cpu: round(cpuPercent),
      eventLoopDelayMs: { p50: round(p50), max: round(max) },
      rssMb: round(process.memoryUsage.rss() / 1_048_576),
      sendLagMaxMs: round(Math.max(0, sendLag.maxMs)),
      saturated,
    };
  }

  stop(): void {
    this.eld.disable();
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
