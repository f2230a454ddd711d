import { durationMs, type Duration, type Plan, type Run, type RunSummary } from "@volley/contracts";

/** One line: "ws echo (ws ws://…/echo; 50 connections at 50/s; echo 10 msg/s per connection for 10s; 2 thresholds; 1 agent from pool default)". */
export function describePlan(plan: Plan): string {
  // Read the scenario loosely: scenario kinds are being added, and a one-line description should not
  // need a change (or break the build) for each new kind.
  const s = plan.scenario as { kind: string; message?: { rate?: number; per?: string }; duration?: Duration };
  const parts = [`${plan.target.protocol} ${plan.target.url}`, `${plan.connections.count} connections at ${plan.connections.rate}/s`];
  let scenario = s.kind;
  if (s.message?.rate !== undefined) scenario += ` ${s.message.rate} msg/s ${s.message.per === "aggregate" ? "in aggregate" : "per connection"}`;
  if (s.duration !== undefined) scenario += ` for ${formatDuration(durationMs(s.duration))}`;
  parts.push(scenario, plan.thresholds.length === 1 ? "1 threshold" : `${plan.thresholds.length} thresholds`);
  parts.push(`${plan.agents.count === 1 ? "1 agent" : `${plan.agents.count} agents`} from pool ${plan.agents.pool}`);
  return `${plan.name} (${parts.join("; ")})`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600),
    m = Math.floor((total % 3600) / 60),
    s = total % 60;
  if (h > 0) return `${h}h${String(m).padStart(2, "0")}m${String(s).padStart(2, "0")}s`;
  if (m > 0) return `${m}m${String(s).padStart(2, "0")}s`;
  return `${s}s`;
}

const ms = (v: number | null) => (v === null ? "—" : v >= 100 ? `${Math.round(v)}ms` : `${v.toFixed(1)}ms`);
const count = (n: number) => n.toLocaleString("en-US");

/** Milliseconds the run has been going (or went), from its own timestamps. */
export function runElapsedMs(run: Run, now: number): number {
  const start = Date.parse(run.startedAt ?? run.createdAt);
  const end = run.endedAt ? Date.parse(run.endedAt) : now;
  return Math.max(0, end - start);
}

/** One progress line: "running 12s · sent 1,200 · received 1,198 · p95 3.2ms". */
export function progressLine(run: Run, now: number): string {
  // Whole seconds: the line is redrawn every second, sub-second digits would only flicker.
  const seconds = Math.floor(runElapsedMs(run, now) / 1000);
  const parts = [`${run.status} ${seconds === 0 ? "0s" : formatDuration(seconds * 1000)}`];
  if (run.summary) {
    parts.push(`sent ${count(run.summary.messages.sent)}`, `received ${count(run.summary.messages.received)}`);
    if (run.summary.closedLoop) parts.push(`closed-loop response p95 ${ms(run.summary.closedLoop.responseTime.p95)}`);
    else if (run.summary.latency.p95 !== null) parts.push(`p95 ${ms(run.summary.latency.p95)}`);
  }
  return parts.join(" · ");
}

function summaryLines(s: RunSummary): string[] {
  const m = s.messages;
  const errors = Object.entries(s.errors).filter(([, n]) => n > 0);
  const lines = [
    `  messages   sent ${count(m.sent)} · received ${count(m.received)} · lost ${count(m.lost)} · duplicated ${count(m.duplicated)} · out of order ${count(m.outOfOrder)}${m.unsent ? ` · not sent (connection closed by the server) ${count(m.unsent)}` : ""}`,
    ...(s.deliveries
      ? [
          `  deliveries due ${count(s.deliveries.expected)} · received ${count(s.deliveries.received)} · lost ${count(s.deliveries.lost)} · duplicated ${count(s.deliveries.duplicated)}${s.deliveries.lateJoiner ? ` · to late joiners ${count(s.deliveries.lateJoiner)} (sent before they joined; not due)` : ""}`,
        ]
      : []),
    `  rate       ${m.sendRate.toFixed(1)} sent/s · ${m.receiveRate.toFixed(1)} received/s`,
    // A closed loop has no latency from intended times: its response times are shown as what they are.
    ...(s.closedLoop
      ? [
          `  response   closed loop: p50 ${ms(s.closedLoop.responseTime.p50)} · p95 ${ms(s.closedLoop.responseTime.p95)} · p99 ${ms(s.closedLoop.responseTime.p99)} · max ${ms(s.closedLoop.responseTime.max)}`,
          `  note       ${s.closedLoop.note}`,
        ]
      : [`  latency    p50 ${ms(s.latency.p50)} · p95 ${ms(s.latency.p95)} · p99 ${ms(s.latency.p99)} · max ${ms(s.latency.max)}`]),
    `  send lag   p95 ${ms(s.sendLag.p95)} · max ${ms(s.sendLag.max)}`,
    `  connect    opened ${count(s.connect.opened)} · failed ${count(s.connect.failed)} · p95 ${ms(s.connect.latency.p95)}`,
    `  errors     ${errors.length === 0 ? "none" : errors.map(([k, n]) => `${k} ${count(n)}`).join(" · ")}`,
  ];
  const u = s.users;
  if (u) {
    lines.push(
      `  users      started ${count(u.started)} · completed ${count(u.completed)} · failed ${count(u.failed)} · dropped ${count(u.dropped)} · time p50 ${ms(u.time.p50)} · p95 ${ms(u.time.p95)}`,
    );
    for (const st of u.steps)
      lines.push(
        `  step       ${st.step}: ${count(st.count)} done${st.failed > 0 ? ` · ${count(st.failed)} failed` : ""} · p50 ${ms(st.latency.p50)} · p95 ${ms(st.latency.p95)}`,
      );
  }
  const flow = s.flow;
  if (flow) {
    for (const st of flow.setup)
      lines.push(`  setup      ${st.step}: ${count(st.count)} done${st.failed > 0 ? ` · ${count(st.failed)} failed` : ""} · p95 ${ms(st.latency.p95)}`);
    if (flow.events.length > 0)
      lines.push(
        `  events     ${flow.events.map((e) => `${e.event} ${count(e.received)}${e.unmatched > 0 ? ` (${count(e.unmatched)} unmatched)` : ""}`).join(" · ")}`,
      );
    for (const sample of flow.samples.slice(0, 3))
      lines.push(`  unmatched  ${sample.event}: ${sample.data.length > 120 ? `${sample.data.slice(0, 120)}…` : sample.data}`);
  }
  const c = s.capacity;
  if (c) {
    const none = c.agentSaturated
      ? "not found — no step could be judged: the agent was the bottleneck from the first step"
      : c.endedBy
        ? "none — the first step already broke it"
        : "not found — no step could be judged: the first step was cut short";
    const rate =
      c.rate === null
        ? none
        : `${c.lowerBound ? "≥ " : ""}${c.rate}/s per ${c.per} (step ${c.step}${c.sendRate === null ? "" : `, ${c.sendRate} sent/s`})${c.lowerBound && !c.agentSaturated ? ", never broke: add steps to find where it breaks" : ""}`;
    lines.push(`  capacity   ${c.slo}: ${rate}`);
    if (c.agentSaturated && c.rate === null) lines.push(`  warning    ${c.endedBy ?? "the first step was limited by the agent"}; add agents and rerun`);
    else if (c.agentSaturated)
      lines.push(
        `  warning    ${c.endedBy ?? "the search ended at a step the agent limited"}; that step decides nothing, so the capacity is a lower bound: add agents and rerun`,
      );
    else if (c.endedBy) lines.push(`  ended      ${c.endedBy}`);
  }
  for (const st of s.steps ?? []) {
    if (st.generatorLimited) lines.push(`  step ${st.index}     agent-limited, not judged: ${st.generatorReason ?? "the agent was saturated"}`);
    if ((st.attempts ?? 1) > 1) lines.push(`  step ${st.index}     run ${st.attempts}x, retried: ${st.retryReason ?? "the agent was saturated"}`);
  }
  if (s.intervals.saturated > 0)
    lines.push(`  warning    the agent was saturated in ${s.intervals.saturated} of ${s.intervals.measured} intervals: latency includes its own delay`);
  if (s.leftOut) lines.push(`  warning    ${s.leftOut.message}`);
  if (s.messages.shed) lines.push(`  warning    the agent shed ${count(s.messages.shed)} planned messages unsent: it was too far behind to send them`);
  if (s.thresholds.length > 0) {
    lines.push("  thresholds");
    for (const t of s.thresholds) lines.push(`    ${t.ok ? "✓" : "✗"} ${t.expression}${t.ok ? "" : ` — ${t.message}`}`);
  }
  return lines;
}

/** The human summary printed when the run has ended. */
export function formatRunSummary(run: Run, runUrl: string): string {
  const head = `run ${run.id} ${run.status.toUpperCase()} after ${formatDuration(runElapsedMs(run, Date.now()))} — ${run.name}`;
  const lines = [head];
  if (run.reason) lines.push(`  reason     ${run.reason}`);
  if (run.summary) lines.push(...summaryLines(run.summary));
  else lines.push("  no measurements were recorded");
  lines.push(`  details    ${runUrl}`);
  return `${lines.join("\n")}\n`;
}
