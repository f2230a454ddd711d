import { thresholdExpression, type RunSummary, type Threshold, type ThresholdInput } from "@volley/contracts";

export type ThresholdResult = RunSummary["thresholds"][number];
type Measured = Omit<RunSummary, "thresholds">;

const OPS = {
  "<": (a: number, b: number) => a < b,
  "<=": (a: number, b: number) => a <= b,
  ">": (a: number, b: number) => a > b,
  ">=": (a: number, b: number) => a >= b,
  "==": (a: number, b: number) => a === b,
} as const;

const PCTS = ["p50", "p90", "p95", "p99", "max", "mean", "min"] as const;

/** Every metric a threshold may name, with its unit: ms for times, % for ratios, plain counts else. */
export function thresholdMetrics(s: Measured): Record<string, { value: number | null; unit: "ms" | "%" | "" }> {
  const out: Record<string, { value: number | null; unit: "ms" | "%" | "" }> = {};
  for (const p of PCTS) {
    out[`latency.${p}`] = { value: s.latency[p], unit: "ms" };
    out[`send_lag.${p}`] = { value: s.sendLag[p], unit: "ms" };
    out[`connect.${p}`] = { value: s.connect.latency[p], unit: "ms" };
  }
  const errorCount = Object.values(s.errors).reduce((a, b) => a + b, 0);
  const attempts = s.messages.sent + s.connect.opened + s.connect.failed;
  out["errors.count"] = { value: errorCount, unit: "" };
  out["errors.rate"] = { value: attempts ? (100 * errorCount) / attempts : 0, unit: "%" };
  out["messages.sent"] = { value: s.messages.sent, unit: "" };
  out["messages.received"] = { value: s.messages.received, unit: "" };
  out["messages.lost"] = { value: s.messages.lost, unit: "" };
  out["messages.loss_rate"] = { value: s.messages.sent ? (100 * s.messages.lost) / s.messages.sent : 0, unit: "%" };
  out["delivery.ratio"] = { value: s.messages.sent ? (100 * s.messages.received) / s.messages.sent : 0, unit: "%" };
  out["throughput.sent"] = { value: s.messages.sendRate, unit: "" };
  out["throughput.received"] = { value: s.messages.receiveRate, unit: "" };
  out["connections.failed"] = { value: s.connect.failed, unit: "" };
  return out;
}

const EXPR = /^\s*([a-z][a-z0-9_.]*)\s*(<=|>=|<|>|==)\s*(\d+(?:\.\d+)?)\s*(ms|s|%)?\s*$/;

/**
 * Evaluates "metric op value[unit]" expressions (a plan's thresholds in either form) against a
 * summary; unknown metrics fail with the list of known ones.
 */
export function evaluateThresholds(thresholds: ReadonlyArray<string | Threshold | ThresholdInput>, summary: Measured): ThresholdResult[] {
  const metrics = thresholdMetrics(summary);
  return thresholds.map(thresholdExpression).map((expression) => {
    const m = EXPR.exec(expression);
    if (!m) return { expression, ok: false, actual: null, message: `cannot parse "${expression}"` };
    const [, name, op, rawValue, unit] = m as unknown as [string, string, keyof typeof OPS, string, string | undefined];
    const metric = metrics[name];
    if (!metric) {
      return { expression, ok: false, actual: null, message: `unknown metric "${name}"; known: ${Object.keys(metrics).join(", ")}` };
    }
    let limit = Number(rawValue);
    if (unit === "s") limit *= 1000;
    if (metric.value === null) return { expression, ok: false, actual: null, message: `${name} was not measured` };
    const ok = OPS[op](metric.value, limit);
    const shown = `${round(metric.value)}${metric.unit}`;
    return {
      expression,
      ok,
      actual: metric.value,
      message: ok ? `${name} = ${shown}` : `${name} = ${shown}, limit ${op} ${limit}${metric.unit} (off by ${round(Math.abs(metric.value - limit))}${metric.unit})`,
    };
  });
}

const round = (n: number) => Math.round(n * 1000) / 1000;
