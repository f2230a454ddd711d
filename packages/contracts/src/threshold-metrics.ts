/**
 * The one home of what a threshold may say: its grammar ("metric op value[unit]") and every metric
 * name, with its unit. The plan schema validates expressions against this list (editor, API,
 * `volley validate`) and packages/metrics evaluates them against a run summary with the same names,
 * so a name that validates is a name that is measured.
 */

/** Each comparison a threshold may make, as the test of a measured value against the limit: the parser and the evaluator both read this table. */
export const THRESHOLD_OP_TESTS = {
  "<=": (value: number, limit: number) => value <= limit,
  ">=": (value: number, limit: number) => value >= limit,
  "<": (value: number, limit: number) => value < limit,
  ">": (value: number, limit: number) => value > limit,
  "==": (value: number, limit: number) => value === limit,
} as const;
export type ThresholdOp = keyof typeof THRESHOLD_OP_TESTS;
export const THRESHOLD_OPS = Object.keys(THRESHOLD_OP_TESTS) as readonly ThresholdOp[];

export const THRESHOLD_STATS = ["p50", "p90", "p95", "p99", "max", "mean", "min"] as const;
export type ThresholdStat = (typeof THRESHOLD_STATS)[number];

/** Timed kinds, each with every statistic (`delivery.p95`), in milliseconds. */
export const TIMED_METRICS = {
  latency: "round trip (echo, ack, pong) from the intended send time",
  delivery: "broadcast/group delivery to each receiver, from the intended send time",
  connect: "connection set-up (TCP, TLS, upgrade or handshake)",
  first_message: "from connected to the first message received",
  canary: "the storm scenario's canary round trips",
  send_lag: "actual minus intended send time (how late the agent was)",
  response_time:
    "http-rps loop: closed: each request's response time from when its user was ready; a closed loop's, never intended-time latency (coordinated omission)",
  user_time: "users: each user's time from its intended arrival to leaving",
} as const;
export type TimedMetric = keyof typeof TIMED_METRICS;

export type MetricUnit = "ms" | "%" | "";

/** Counts (plain numbers), rates (per second) and ratios (%). */
export const COUNT_METRICS = {
  "messages.sent": { unit: "", doc: "messages sent" },
  "messages.received": { unit: "", doc: "replies received (round trips)" },
  "messages.lost": { unit: "", doc: "replies not received within the message timeout" },
  "messages.loss_rate": { unit: "%", doc: "messages.lost / messages.sent" },
  "delivery.expected": { unit: "", doc: "broadcast/group deliveries due (one per message and receiver)" },
  "delivery.received": { unit: "", doc: "broadcast/group deliveries received" },
  "delivery.lost": { unit: "", doc: "deliveries not received within the message timeout" },
  "delivery.ratio": { unit: "%", doc: "deliveries received / expected; for scenarios without deliveries, replies received / sent" },
  "delivery.rate": { unit: "", doc: "deliveries per second over the sending time" },
  "canary.sent": { unit: "", doc: "the canary's pings sent" },
  "canary.lost": { unit: "", doc: "the canary's pings not answered in time" },
  "throughput.sent": { unit: "", doc: "messages sent per second over the sending time" },
  "throughput.received": { unit: "", doc: "replies received per second" },
  "connections.opened": { unit: "", doc: "connections opened" },
  "connections.failed": { unit: "", doc: "connection attempts that failed" },
  "errors.count": { unit: "", doc: "errors of every class" },
  "errors.rate": { unit: "%", doc: "errors / (messages sent + connection attempts)" },
  "intervals.saturated": { unit: "", doc: "measured seconds in which an agent reported itself saturated" },
  "messages.unmatched": { unit: "", doc: "flows: incoming messages that answered no message (0 without a flow)" },
  "messages.unmatched_rate": { unit: "%", doc: "flows: unmatched / every incoming message (0 without a flow)" },
  "setup.failed": { unit: "", doc: "flows: connections whose setup failed, every step (0 without a flow)" },
  "users.started": { unit: "", doc: "users: arrivals that started their steps" },
  "users.completed": { unit: "", doc: "users: users that finished every step" },
  "users.failed": { unit: "", doc: "users: users stopped by a failed step (or maxUserTime)" },
  "users.dropped": { unit: "", doc: "users: arrivals that found connections.count users busy (never started)" },
  "users.failed_rate": { unit: "%", doc: "users: failed / started" },
} as const satisfies Record<string, { unit: MetricUnit; doc: string }>;

/** Every metric a threshold may name. */
export const THRESHOLD_METRIC_NAMES: readonly string[] = [
  ...Object.keys(TIMED_METRICS).flatMap((kind) => THRESHOLD_STATS.map((s) => `${kind}.${s}`)),
  ...Object.keys(COUNT_METRICS),
];

export function thresholdMetricUnit(name: string): MetricUnit | undefined {
  const [kind, stat] = name.split(".");
  if (kind && kind in TIMED_METRICS && (THRESHOLD_STATS as readonly string[]).includes(stat ?? "")) return "ms";
  return (COUNT_METRICS as Record<string, { unit: MetricUnit }>)[name]?.unit;
}

/** The names in a short form for messages: `latency|delivery|….p50|…|min, messages.sent, …`. */
export const THRESHOLD_METRICS_SHORT = `${Object.keys(TIMED_METRICS).join("|")} . ${THRESHOLD_STATS.join("|")} (ms); ${Object.keys(COUNT_METRICS).join(", ")}`;

export type ParsedThreshold = { ok: true; metric: string; op: ThresholdOp; limit: number; unit: MetricUnit } | { ok: false; message: string };

// Longer operators first, so "<=" is never read as "<" followed by garbage.
const OPS_ALTERNATION = [...THRESHOLD_OPS].sort((a, b) => b.length - a.length).join("|");
const EXPR = new RegExp(`^\\s*([a-z][a-z0-9_.]*)\\s*(${OPS_ALTERNATION})\\s*(\\d+(?:\\.\\d+)?)\\s*(ms|s|%)?\\s*$`);

/** Parses "metric op value[unit]"; the limit is in the metric's own unit (seconds become ms). */
export function parseThreshold(expression: string): ParsedThreshold {
  const m = EXPR.exec(expression);
  if (!m) return { ok: false, message: `cannot parse "${expression}": write it like "latency.p95 < 200ms" or "errors.rate < 1%"` };
  const [, metric, op, rawValue, written] = m as unknown as [string, string, ThresholdOp, string, string | undefined];
  const unit = thresholdMetricUnit(metric);
  if (unit === undefined) {
    const near = closestMetric(metric);
    return { ok: false, message: `unknown metric "${metric}"${near ? ` (did you mean "${near}"?)` : ""}; known metrics: ${THRESHOLD_METRICS_SHORT}` };
  }
  if (written !== undefined) {
    const writtenKind = written === "%" ? "%" : "ms";
    if (writtenKind !== unit) {
      const expect = unit === "ms" ? "a time such as 200ms or 1s" : unit === "%" ? "a percentage such as 1%" : "a plain number";
      return {
        ok: false,
        message: `${metric} is ${unit === "ms" ? "a time" : unit === "%" ? "a percentage" : "a count"}: write ${expect}, not "${rawValue}${written}"`,
      };
    }
  }
  const limit = Number(rawValue) * (written === "s" ? 1000 : 1);
  return { ok: true, metric, op, limit, unit };
}

/** The known name nearest to a misspelled one (edit distance ≤ 3), if any. */
function closestMetric(name: string): string | null {
  let best: { name: string; d: number } | null = null;
  for (const known of THRESHOLD_METRIC_NAMES) {
    const d = editDistance(name, known);
    if (d <= 3 && (!best || d < best.d)) best = { name: known, d };
  }
  return best?.name ?? null;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
