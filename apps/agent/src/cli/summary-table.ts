import Table from "cli-table3";
import type { LatencySummary, RunSummary } from "@volley/contracts";

// No colours: the table is often piped into files and CI logs, where escape codes are noise.
const PLAIN = { head: [], border: [] };
const fmt = (ms: number | null) => (ms === null ? "-" : `${ms.toFixed(ms < 10 ? 3 : 1)} ms`);
const latencyRow = (name: string, l: LatencySummary) => [name, String(l.count), fmt(l.p50), fmt(l.p90), fmt(l.p95), fmt(l.p99), fmt(l.max)];

/** One row per sweep step (failed and cut-short steps included, marked), then the capacity when there is one. */
function stepsTable(s: RunSummary): string {
  const steps = new Table({ head: ["step", "rate", "sent/s", "received/s", "lost", "p50", "p95", "p99", "max", "result"], style: PLAIN });
  for (const st of s.steps!) {
    const result = st.generatorLimited
      ? `AGENT-LIMITED, not judged: ${st.generatorReason ?? "the agent was saturated"}`
      : st.failed
        ? `FAIL ${st.reason ?? ""}`.trim()
        : st.aborted
          ? "cut short"
          : "ok";
    const retried = (st.attempts ?? 1) > 1 ? ` (run ${st.attempts}x; retried: ${st.retryReason ?? "agent saturated"})` : "";
    const l = st.latency.count > 0 ? st.latency : st.delivery;
    steps.push([
      String(st.index),
      `${st.plannedRate}/s per ${st.per}`,
      String(st.sendRate),
      String(st.receiveRate),
      String(st.lost),
      fmt(l.p50),
      fmt(l.p95),
      fmt(l.p99),
      fmt(l.max),
      `${result}${st.saturated && !st.generatorLimited ? " (agent saturated)" : ""}${retried}`,
    ]);
  }
  let text = steps.toString();
  const c = s.capacity;
  if (c) {
    const none = c.agentSaturated
      ? "not found — no step could be judged: the agent was the bottleneck from the first step"
      : c.endedBy
        ? "none — the first step already failed"
        : "not found — no step could be judged: the first step was cut short";
    const rate =
      c.rate === null
        ? none
        : `${c.lowerBound ? "≥ " : ""}${c.rate}/s per ${c.per} (step ${c.step}, sent ${c.sendRate}/s)${c.lowerBound && !c.agentSaturated ? ", never broke" : ""}`;
    text += `\ncapacity (${c.slo}): ${rate}`;
    if (c.agentSaturated && c.rate === null) text += `\nwarning: ${c.endedBy ?? "the first step was limited by the agent"}; add agents and rerun`;
    else if (c.agentSaturated)
      text += `\nwarning: ${c.endedBy ?? "the search ended at a step the agent limited"}; that step decides nothing, so the capacity is a lower bound: add agents and rerun`;
    else if (c.endedBy) text += `\nended: ${c.endedBy}`;
  }
  return text;
}

/** Flows: incoming messages per event, what answered nothing, and a few samples of it. */
function flowEventsTable(flow: NonNullable<RunSummary["flow"]>): string {
  const events = new Table({ head: ["event", "received", "unmatched"], style: PLAIN });
  for (const e of flow.events) events.push([e.event, String(e.received), String(e.unmatched)]);
  let text = events.toString();
  for (const sample of flow.samples.slice(0, 5))
    text += `\nunmatched ${sample.event}: ${sample.data.length > 160 ? `${sample.data.slice(0, 160)}…` : sample.data}`;
  return text;
}

/** The human summary printed to stdout when --json is not given. */
export function summaryTable(s: RunSummary): string {
  const counts = new Table({ head: ["messages", "value"], style: PLAIN });
  counts.push(
    ["sent", String(s.messages.sent)],
    ["received", String(s.messages.received)],
    ["lost", String(s.messages.lost)],
    ...(s.deliveries
      ? [
          ["deliveries due / received / lost", `${s.deliveries.expected} / ${s.deliveries.received} / ${s.deliveries.lost}`],
          ["delivery ratio", s.deliveries.ratio === null ? "-" : `${s.deliveries.ratio}%`],
          ["deliveries duplicated", String(s.deliveries.duplicated)],
          ...(s.deliveries.lateJoiner ? [["copies to late joiners (sent before they joined; not due)", String(s.deliveries.lateJoiner)]] : []),
        ]
      : []),
    ...(s.messages.shed ? [["shed by the agent (too far behind to send)", String(s.messages.shed)]] : []),
    ["duplicated", String(s.messages.duplicated)],
    ["out of order", String(s.messages.outOfOrder)],
    ["send rate", `${s.messages.sendRate}/s`],
    ["receive rate", `${s.messages.receiveRate}/s`],
    ["connections opened / failed", `${s.connect.opened} / ${s.connect.failed}`],
    ["intervals measured / warm-up / saturated", `${s.intervals.measured} / ${s.intervals.warmup} / ${s.intervals.saturated}`],
  );
  for (const [k, v] of Object.entries(s.errors)) counts.push([`errors.${k}`, String(v)]);

  const latency = new Table({ head: ["latency", "count", "p50", "p90", "p95", "p99", "max"], style: PLAIN });
  latency.push(latencyRow("round trip", s.latency));
  // Deliveries (groups, broadcast), the first message and the storm's canary, when the run timed them.
  if (s.deliveries) latency.push(latencyRow("delivery", s.deliveries.latency));
  if (s.timings && s.timings.firstMessage.count > 0) latency.push(latencyRow("first message", s.timings.firstMessage));
  if (s.canary) latency.push(latencyRow("canary", s.canary.latency));
  // A closed loop's response times are not latency: labelled so, and explained under the table.
  if (s.closedLoop) latency.push(latencyRow("closed-loop response time *", s.closedLoop.responseTime));
  latency.push(latencyRow("send lag", s.sendLag), latencyRow("connect", s.connect.latency));
  if (s.timings?.httpConnect) latency.push(latencyRow("http connect, per request", s.timings.httpConnect));
  const flow = s.flow;
  if (flow) {
    for (const k of flow.kinds ?? []) latency.push(latencyRow(`round trip: ${k.kind}`, k.latency));
    for (const st of flow.setup) latency.push(latencyRow(`setup ${st.step}${st.failed > 0 ? ` (${st.failed} failed)` : ""}`, st.latency));
    if (flow.push) latency.push(latencyRow(`server push${flow.push.clockAhead > 0 ? ` (${flow.push.clockAhead} stamped ahead)` : ""}`, flow.push.latency));
  }

  const parts = [counts.toString(), latency.toString()];
  // What the errors said, a few per class (close codes, HTTP statuses, the server's words).
  const said = Object.entries(s.errorSamples ?? {}).flatMap(([cls, texts]) => texts.map((t) => `errors.${cls}: ${t}`));
  if (said.length > 0) parts.push(said.join("\n"));
  if (s.closedLoop) parts.push(`* ${s.closedLoop.note}`);
  if (flow && flow.events.length > 0) parts.push(flowEventsTable(flow));
  if (s.steps && s.steps.length > 0) parts.push(stepsTable(s));
  if (s.thresholds.length > 0) {
    const th = new Table({ head: ["threshold", "result", "detail"], style: PLAIN });
    for (const t of s.thresholds) th.push([t.expression, t.ok ? "pass" : "FAIL", t.message]);
    parts.push(th.toString());
  }
  return `${parts.join("\n")}\n`;
}
