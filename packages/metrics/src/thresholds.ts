import {
  COUNT_METRICS,
  parseThreshold,
  THRESHOLD_OP_TESTS,
  THRESHOLD_STATS,
  thresholdExpression,
  type LatencySummary,
  type MetricUnit,
  type RunSummary,
  type Threshold,
  type ThresholdInput,
  type TimedMetric,
} from "@volley/contracts";

export type ThresholdResult = RunSummary["thresholds"][number];
type Measured = Omit<RunSummary, "thresholds">;

const pct = (part: number, whole: number) => (whole ? (100 * part) / whole : null);

/**
 * The value of every metric a threshold may name (contracts' threshold-metrics.ts lists them) in a
 * summary; null when the run did not measure it. Units: ms for times, % for ratios, plain else.
 */
export function thresholdMetrics(s: Measured): Record<string, { value: number | null; unit: MetricUnit }> {
  const timed: Record<TimedMetric, LatencySummary | undefined> = {
    latency: s.latency,
    delivery: s.deliveries?.latency ?? s.timings?.delivery,
    connect: s.connect.latency,
    first_message: s.timings?.firstMessage,
    canary: s.canary?.latency ?? s.timings?.canary,
    send_lag: s.sendLag,
    response_time: s.closedLoop?.responseTime,
    user_time: s.users?.time,
  };
  const out: Record<string, { value: number | null; unit: MetricUnit }> = {};
  for (const [kind, summary] of Object.entries(timed)) {
    // A kind the run never measured (count 0) has no value: "was not measured", never 0 ms.
    for (const stat of THRESHOLD_STATS) out[`${kind}.${stat}`] = { value: summary && summary.count > 0 ? summary[stat] : null, unit: "ms" };
  }

  const errorCount = Object.values(s.errors).reduce((a, b) => a + b, 0);
  const attempts = s.messages.sent + s.connect.opened + s.connect.failed;
  const d = s.deliveries;
  const values: Record<keyof typeof COUNT_METRICS, number | null> = {
    "messages.sent": s.messages.sent,
    "messages.received": s.messages.received,
    "messages.lost": s.messages.lost,
    "messages.loss_rate": pct(s.messages.lost, s.messages.sent) ?? 0,
    "delivery.expected": d ? d.expected : null,
    "delivery.received": d ? d.received : null,
    "delivery.lost": d ? d.lost : null,
    // Groups and broadcast: the deliveries due that arrived; other scenarios: the replies that did.
    "delivery.ratio": d ? d.ratio : pct(s.messages.received, s.messages.sent),
    "delivery.rate": d ? d.rate : null,
    "canary.sent": s.canary ? s.canary.sent : null,
    "canary.lost": s.canary ? s.canary.lost : null,
    "throughput.sent": s.messages.sendRate,
    "throughput.received": s.messages.receiveRate,
    "connections.opened": s.connect.opened,
    "connections.failed": s.connect.failed,
    "errors.count": errorCount,
    "errors.rate": pct(errorCount, attempts) ?? 0,
    "intervals.saturated": s.intervals.saturated,
    "messages.unmatched": s.flow?.unmatched ?? 0,
    "messages.unmatched_rate": pct(s.flow?.unmatched ?? 0, s.flow?.events.reduce((n, e) => n + e.received, 0) ?? 0) ?? 0,
    "setup.failed": s.flow?.setup.reduce((n, st) => n + st.failed, 0) ?? 0,
    "users.started": s.users ? s.users.started : null,
    "users.completed": s.users ? s.users.completed : null,
    "users.failed": s.users ? s.users.failed : null,
    "users.dropped": s.users ? s.users.dropped : null,
    "users.failed_rate": s.users ? (pct(s.users.failed, s.users.started) ?? 0) : null,
  };
  for (const [name, value] of Object.entries(values)) out[name] = { value, unit: COUNT_METRICS[name as keyof typeof COUNT_METRICS].unit };
  return out;
}

/**
 * Evaluates "metric op value[unit]" expressions (a plan's thresholds in either form) against a
 * summary. Plans are validated against the same grammar and names, so an unknown metric here comes
 * only from a plan stored before a name was retired.
 */
export function evaluateThresholds(thresholds: ReadonlyArray<string | Threshold | ThresholdInput>, summary: Measured): ThresholdResult[] {
  const metrics = thresholdMetrics(summary);
  return thresholds.map(thresholdExpression).map((expression) => {
    const parsed = parseThreshold(expression);
    if (!parsed.ok) return { kind: "threshold", expression, ok: false, actual: null, message: parsed.message.replace(/; known metrics: .*$/, "") };
    const { metric: name, op, limit } = parsed;
    const metric = metrics[name]!;
    if (metric.value === null) return { kind: "threshold", expression, ok: false, actual: null, message: `${name} was not measured` };
    const ok = THRESHOLD_OP_TESTS[op](metric.value, limit);
    const shown = `${round(metric.value)}${metric.unit}`;
    return {
      kind: "threshold",
      expression,
      ok,
      actual: metric.value,
      message: ok
        ? `${name} = ${shown}`
        : `${name} = ${shown}, limit ${op} ${limit}${metric.unit} (off by ${round(Math.abs(metric.value - limit))}${metric.unit})`,
    };
  });
}

const round = (n: number) => Math.round(n * 1000) / 1000;
