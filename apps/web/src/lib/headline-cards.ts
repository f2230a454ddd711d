import { capacityJudged, parseThreshold, thresholdExpression, type IntervalPoint, type Run } from "@volley/contracts";
import { DASH, fmtInt, fmtMs, fmtMsgRate, fmtPercent, fmtRate, fmtRateValue } from "./format";

/** A plan threshold drawn on a card's chart: a horizontal line at `limit`, in the chart's unit. */
export interface CardThreshold {
  expression: string;
  limit: number;
  /** The run's verdict on it so far; undefined before any summary. */
  ok?: boolean;
}

export interface HeadlineCard {
  key: "rate" | "connections" | "p95" | "p99" | "errors" | "loss" | "capacity";
  label: string;
  /** The run's figure, formatted with its unit. */
  value: string;
  detail?: string;
  /** Red when a threshold on it failed (or, without one, when it is an error or a loss above zero). */
  tone?: "bad" | "good";
  /** Per second (or, for rates of the whole run, the run so far at each second); null where not measured. */
  series?: (number | null)[];
  format?: (v: number | null) => string;
  thresholds: CardThreshold[];
}

/** Which plan thresholds belong on which card, with the unit conversion to the card's chart. */
const CARD_METRICS: Record<string, { card: HeadlineCard["key"]; toChart?: (limit: number) => number }> = {
  "throughput.sent": { card: "rate" },
  "throughput.received": { card: "rate" },
  "connections.opened": { card: "connections" },
  "latency.p95": { card: "p95" },
  "delivery.p95": { card: "p95" },
  "latency.p99": { card: "p99" },
  "delivery.p99": { card: "p99" },
  "errors.rate": { card: "errors" },
  "messages.loss_rate": { card: "loss" },
  // The loss card draws what was lost, so a floor on the ratio delivered is a ceiling on the loss.
  "delivery.ratio": { card: "loss", toChart: (limit) => 100 - limit },
};

const pct = (part: number, whole: number) => (whole > 0 ? (100 * part) / whole : null);

/** Running totals → the run-so-far rate at each second: what a rate threshold is judged on, as it evolved. */
function runningRate(intervals: IntervalPoint[], part: (p: IntervalPoint) => number, whole: (p: IntervalPoint) => number): (number | null)[] {
  let a = 0;
  let b = 0;
  return intervals.map((p) => {
    a += part(p);
    b += whole(p);
    return pct(a, b);
  });
}

/**
 * The headline figures of a run, as the cards above its charts show them: mean and peak messages/s,
 * peak connections, p95 and p99, error and loss rate, and a sweep's capacity ("≥" when no step
 * broke the SLO). Each carries its per-second series and the plan's thresholds on that figure.
 */
export function headlineCards(run: Run, intervals: IntervalPoint[]): HeadlineCard[] {
  const s = run.summary;
  const measured = intervals.filter((p) => !p.warmup);
  const deliveryOnly = !!s?.deliveries && s.latency.count === 0;
  const verdicts = new Map((s?.thresholds ?? []).map((t) => [t.expression, t.ok]));
  const thresholds = new Map<HeadlineCard["key"], CardThreshold[]>();
  for (const t of run.plan.thresholds) {
    const expression = thresholdExpression(t);
    const parsed = parseThreshold(expression);
    if (!parsed.ok) continue;
    const target = CARD_METRICS[parsed.metric];
    // Only thresholds of the kind the card draws: a delivery percentile on a round-trip chart would mislead.
    if (!target || (parsed.metric.startsWith("delivery.p") && !deliveryOnly) || (parsed.metric.startsWith("latency.p") && deliveryOnly)) continue;
    const list = thresholds.get(target.card) ?? [];
    list.push({ expression, limit: target.toChart ? target.toChart(parsed.limit) : parsed.limit, ok: verdicts.get(expression) });
    thresholds.set(target.card, list);
  }
  const on = (key: HeadlineCard["key"]) => thresholds.get(key) ?? [];
  const toneOf = (key: HeadlineCard["key"], bad: boolean): HeadlineCard["tone"] => {
    const ts = on(key).filter((t) => t.ok !== undefined);
    if (ts.length > 0) return ts.every((t) => t.ok) ? "good" : "bad";
    return bad ? "bad" : undefined;
  };

  const peakSent = measured.reduce((m, p) => Math.max(m, p.sent), 0);
  const peakConnections = intervals.reduce((m, p) => Math.max(m, p.connections), 0);
  const latency = deliveryOnly ? s?.deliveries?.latency : s?.latency;
  const errorCount = s ? Object.values(s.errors).reduce((a, b) => a + b, 0) : 0;
  const attempts = s ? s.messages.sent + s.connect.opened + s.connect.failed : 0;
  const errorRate = s ? (pct(errorCount, attempts) ?? 0) : null;
  const lost = deliveryOnly ? (s?.deliveries?.lost ?? 0) : (s?.messages.lost ?? 0);
  const due = deliveryOnly ? (s?.deliveries?.expected ?? 0) : (s?.messages.sent ?? 0);
  const lossRate = s ? (pct(lost, due) ?? 0) : null;
  // Connections opened by each second: those open now plus every one closed so far.
  let closed = 0;
  const cards: HeadlineCard[] = [
    {
      key: "rate",
      label: "Messages/s",
      value: s ? fmtRate(s.messages.sendRate) : DASH,
      detail: `peak ${fmtRateValue(peakSent)}/s sent${s && !deliveryOnly ? `, ${fmtRate(s.messages.receiveRate)} received` : ""}${s?.deliveries ? `, ${fmtRate(s.deliveries.rate)} delivered` : ""}`,
      series: intervals.map((p) => p.sent),
      format: fmtRate,
      thresholds: on("rate"),
      tone: toneOf("rate", false),
    },
    {
      key: "connections",
      label: "Connections",
      value: fmtInt(peakConnections),
      detail: s ? `peak open; ${fmtInt(s.connect.opened)} opened${s.connect.failed > 0 ? `, ${fmtInt(s.connect.failed)} failed` : ""}` : "peak open",
      series: on("connections").length > 0 ? intervals.map((p) => p.connections + (closed += p.disconnects)) : intervals.map((p) => p.connections),
      format: fmtInt,
      thresholds: on("connections"),
      tone: toneOf("connections", (s?.connect.failed ?? 0) > 0),
    },
    {
      key: "p95",
      label: deliveryOnly ? "Delivery p95" : "Latency p95",
      value: fmtMs(latency?.p95 ?? null),
      detail: latency ? `p50 ${fmtMs(latency.p50)}` : undefined,
      series: intervals.map((p) => (deliveryOnly ? (p.delivery?.p95 ?? null) : p.p95)),
      format: fmtMs,
      thresholds: on("p95"),
      tone: toneOf("p95", false),
    },
    {
      key: "p99",
      label: deliveryOnly ? "Delivery p99" : "Latency p99",
      value: fmtMs(latency?.p99 ?? null),
      detail: latency ? `max ${fmtMs(latency.max)}` : undefined,
      series: intervals.map((p) => (deliveryOnly ? (p.delivery?.p99 ?? null) : p.p99)),
      format: fmtMs,
      thresholds: on("p99"),
      tone: toneOf("p99", false),
    },
    {
      key: "errors",
      label: "Error rate",
      value: fmtPercent(errorRate, errorRate !== null && errorRate > 0 && errorRate < 0.1 ? 3 : 2),
      detail: `${fmtInt(errorCount)} error${errorCount === 1 ? "" : "s"} of ${fmtInt(attempts)} messages and connects`,
      series: runningRate(intervals, (p) => p.errors, attemptsPerSecond(intervals)),
      format: (v) => fmtPercent(v, 2),
      thresholds: on("errors"),
      tone: toneOf("errors", errorCount > 0),
    },
    {
      key: "loss",
      label: deliveryOnly ? "Delivery loss" : "Loss rate",
      value: fmtPercent(lossRate, lossRate !== null && lossRate > 0 && lossRate < 0.1 ? 3 : 2),
      detail: `${fmtInt(lost)} of ${fmtInt(due)} ${deliveryOnly ? "deliveries" : "replies"} lost`,
      series: runningRate(
        intervals,
        (p) => (deliveryOnly ? (p.delivery?.lost ?? 0) : p.lost),
        (p) => p.sent,
      ),
      format: (v) => fmtPercent(v, 2),
      thresholds: on("loss"),
      tone: toneOf("loss", lost > 0),
    },
  ];
  const capacity = s?.capacity;
  if (capacity) {
    const per = capacity.per === "connection" ? " per connection" : "";
    // No step judged: the search found nothing either way (the run is inconclusive), not "a lower bound" of nothing.
    const judged = capacityJudged(capacity);
    cards.push({
      key: "capacity",
      label: `Capacity at ${capacity.slo}`,
      value: !judged ? "not found" : capacity.rate === null ? "none" : `${capacity.lowerBound ? "≥ " : ""}${fmtMsgRate(capacity.rate)}${per}`,
      detail: !judged
        ? capacity.agentSaturated
          ? "inconclusive: no step could be judged, the load generator (agent) limited the first; add agents and rerun"
          : "inconclusive: no step could be judged, the first was cut short"
        : capacity.agentSaturated
          ? "a lower bound: the search ended at a step the load generator (agent) limited, not the server"
          : capacity.rate === null
            ? "the first step already broke the SLO"
            : capacity.lowerBound
              ? "never broke: the server holds at least this"
              : `${capacity.sendRate === null ? DASH : fmtRate(capacity.sendRate)} sent${capacity.deliveryRate ? `, ${fmtRate(capacity.deliveryRate)} delivered` : ""}`,
      thresholds: [],
      tone: judged && capacity.rate === null ? "bad" : undefined,
    });
  }
  return cards;
}

/**
 * Per second, what errors.rate divides by: messages sent plus connection attempts, those opened
 * (open now − open a second before + closed in it) and those that failed.
 */
function attemptsPerSecond(intervals: IntervalPoint[]): (p: IntervalPoint) => number {
  const opened = new Map<IntervalPoint, number>();
  let before = 0;
  for (const p of intervals) {
    opened.set(p, Math.max(0, p.connections - before + p.disconnects));
    before = p.connections;
  }
  return (p) => p.sent + p.connectFailed + (opened.get(p) ?? 0);
}

const LATENCY_STATS = ["p50", "p90", "p95", "p99", "max", "mean", "min"];

/**
 * The plan's thresholds that belong on a timeline chart, as lines in its unit: latency
 * percentiles (of round trips, or deliveries when the run times only those) on the latency chart,
 * throughput on the messages chart. Whole-run figures drawn against per-second ones: a line the
 * per-second p95 crosses now and then may still hold for the run, and the legend off the chart shows the run's.
 */
export function timelineThresholds(run: Run, chart: "latency" | "throughput", deliveryOnly: boolean): { value: number; label: string; ok?: boolean }[] {
  const verdicts = new Map((run.summary?.thresholds ?? []).map((t) => [t.expression, t.ok]));
  const out: { value: number; label: string; ok?: boolean }[] = [];
  for (const t of run.plan.thresholds) {
    const expression = thresholdExpression(t);
    const parsed = parseThreshold(expression);
    if (!parsed.ok) continue;
    const [kind, stat] = parsed.metric.split(".") as [string, string];
    const fits =
      chart === "latency"
        ? kind === (deliveryOnly ? "delivery" : "latency") && LATENCY_STATS.includes(stat)
        : parsed.metric === "throughput.sent" || parsed.metric === "throughput.received" || parsed.metric === "delivery.rate";
    if (fits) out.push({ value: parsed.limit, label: expression, ok: verdicts.get(expression) });
  }
  return out;
}
