import type { IntervalPoint } from "@volley/contracts";

const COLUMNS: [string, (p: IntervalPoint) => string | number | boolean | null][] = [
  ["index", (p) => p.index],
  ["time_iso", (p) => new Date(p.t).toISOString()],
  ["warmup", (p) => p.warmup],
  ["saturated", (p) => p.saturated],
  ["connections", (p) => p.connections],
  ["sent", (p) => p.sent],
  ["received", (p) => p.received],
  ["lost", (p) => p.lost],
  ["errors", (p) => p.errors],
  ["disconnects", (p) => p.disconnects],
  ["connect_failed", (p) => p.connectFailed],
  ["latency_p50_ms", (p) => p.p50],
  ["latency_p95_ms", (p) => p.p95],
  ["latency_p99_ms", (p) => p.p99],
  ["latency_max_ms", (p) => p.max],
  ["agent_cpu_max_pct", (p) => p.health.cpu],
  ["agent_event_loop_max_ms", (p) => p.health.eventLoopMs],
  ["agent_send_lag_max_ms", (p) => p.health.sendLagMs],
  ["agents", (p) => p.health.agents],
];

/** The timeline as CSV (RFC 4180, header row, empty cell for "not measured"), one row per second. */
export function intervalsCsv(points: readonly IntervalPoint[]): string {
  const rows = [COLUMNS.map(([name]) => name).join(",")];
  for (const p of points)
    rows.push(
      COLUMNS.map(([, get]) => {
        const v = get(p);
        return v === null ? "" : String(v);
      }).join(","),
    );
  return `${rows.join("\r\n")}\r\n`;
}
