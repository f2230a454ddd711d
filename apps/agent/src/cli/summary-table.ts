import Table from "cli-table3";
import type { LatencySummary, RunSummary } from "@volley/contracts";

// No colours: the table is often piped into files and CI logs, where escape codes are noise.
const PLAIN = { head: [], border: [] };
const fmt = (ms: number | null) => (ms === null ? "-" : `${ms.toFixed(ms < 10 ? 3 : 1)} ms`);
const latencyRow = (name: string, l: LatencySummary) => [name, String(l.count), fmt(l.p50), fmt(l.p90), fmt(l.p95), fmt(l.p99), fmt(l.max)];

/** The human summary printed to stdout when --json is not given. */
export function summaryTable(s: RunSummary): string {
  const counts = new Table({ head: ["messages", "value"], style: PLAIN });
  counts.push(
    ["sent", String(s.messages.sent)],
    ["received", String(s.messages.received)],
    ["lost", String(s.messages.lost)],
    ["duplicated", String(s.messages.duplicated)],
    ["out of order", String(s.messages.outOfOrder)],
    ["send rate", `${s.messages.sendRate}/s`],
    ["receive rate", `${s.messages.receiveRate}/s`],
    ["connections opened / failed", `${s.connect.opened} / ${s.connect.failed}`],
    ["intervals measured / warm-up / saturated", `${s.intervals.measured} / ${s.intervals.warmup} / ${s.intervals.saturated}`],
  );
  for (const [k, v] of Object.entries(s.errors)) counts.push([`errors.${k}`, String(v)]);

  const latency = new Table({ head: ["latency", "count", "p50", "p90", "p95", "p99", "max"], style: PLAIN });
  latency.push(latencyRow("round trip", s.latency), latencyRow("send lag", s.sendLag), latencyRow("connect", s.connect.latency));

  const parts = [counts.toString(), latency.toString()];
  if (s.thresholds.length > 0) {
    const th = new Table({ head: ["threshold", "result", "detail"], style: PLAIN });
    for (const t of s.thresholds) th.push([t.expression, t.ok ? "pass" : "FAIL", t.message]);
    parts.push(th.toString());
  }
  return `${parts.join("\n")}\n`;
}
