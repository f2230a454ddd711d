import { durationMs, type StopWhen } from "@volley/contracts";
import type { Histogram } from "./histogram";

/** What a sweep step measured, enough to judge its stop condition (the engine per shard, the summary merged). */
export interface StepMeasure {
  /** The scenario's main latency (round trip, or delivery when it has none), µs. */
  latency: Histogram | undefined;
  sent: number;
  lost: number;
  /** Deliveries expected and lost (broadcast, groups), added to the loss rate. */
  deliveriesExpected: number;
  deliveriesLost: number;
  errors: number;
  disconnects: number;
  /** Users: those that left during the step (completed or failed), and those of them that failed. */
  usersLeft?: number;
  usersFailed?: number;
}

const PERCENTILES = { p50: 50, p95: 95, p99: 99, max: 100 } as const;

/** Why the step broke its stop condition ("p95 312ms > 200ms; 2 disconnects > 0"), or null when it held. */
export function stopReason(stopWhen: StopWhen | undefined, m: StepMeasure): string | null {
  if (!stopWhen) return null;
  const broken: string[] = [];
  for (const [key, p] of Object.entries(PERCENTILES) as [keyof typeof PERCENTILES, number][]) {
    const limit = stopWhen[key];
    if (limit === undefined || !m.latency || m.latency.totalCount === 0) continue;
    const ms = (p === 100 ? m.latency.maxValue : m.latency.getValueAtPercentile(p)) / 1000;
    if (ms > durationMs(limit)) broken.push(`${key} ${round(ms)}ms > ${durationMs(limit)}ms`);
  }
  const attempts = m.sent + m.deliveriesExpected;
  if (stopWhen.lossRate !== undefined && attempts > 0) {
    const rate = (100 * (m.lost + m.deliveriesLost)) / attempts;
    if (rate > stopWhen.lossRate) broken.push(`loss ${round(rate)}% > ${stopWhen.lossRate}%`);
  }
  if (stopWhen.errorRate !== undefined && m.sent > 0) {
    const rate = (100 * m.errors) / m.sent;
    if (rate > stopWhen.errorRate) broken.push(`errors ${round(rate)}% > ${stopWhen.errorRate}%`);
  }
  if (stopWhen.disconnects !== undefined && m.disconnects > stopWhen.disconnects) {
    broken.push(`${m.disconnects} disconnects > ${stopWhen.disconnects}`);
  }
  if (stopWhen.usersFailedRate !== undefined && (m.usersLeft ?? 0) > 0) {
    const rate = (100 * (m.usersFailed ?? 0)) / m.usersLeft!;
    if (rate > stopWhen.usersFailedRate) broken.push(`users failed ${round(rate)}% > ${stopWhen.usersFailedRate}%`);
  }
  return broken.length > 0 ? broken.join("; ") : null;
}

/** The SLO as one line, like "p95 <= 200ms, errors <= 1%". */
export function describeStopWhen(stopWhen: StopWhen): string {
  const parts: string[] = [];
  for (const key of ["p50", "p95", "p99", "max"] as const) if (stopWhen[key] !== undefined) parts.push(`${key} <= ${durationMs(stopWhen[key])}ms`);
  if (stopWhen.lossRate !== undefined) parts.push(`loss <= ${stopWhen.lossRate}%`);
  if (stopWhen.errorRate !== undefined) parts.push(`errors <= ${stopWhen.errorRate}%`);
  if (stopWhen.disconnects !== undefined) parts.push(`disconnects <= ${stopWhen.disconnects}`);
  if (stopWhen.usersFailedRate !== undefined) parts.push(`users failed <= ${stopWhen.usersFailedRate}%`);
  return parts.join(", ");
}

const round = (n: number) => Math.round(n * 100) / 100;
