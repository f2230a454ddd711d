import type { LatencySummary, RunSummary } from "@volley/contracts";
import { LatencyRowsTable } from "./latency-rows-table";

/** One row per measured kind (connect, round trip, delivery, first message, canary, send lag), same columns for each; kinds with no samples are left out. */
export function LatencyKindsTable({ summary }: { summary: RunSummary }) {
  const t = summary.timings;
  const rows: { kind: string; hint: string; s: LatencySummary | undefined }[] = [
    { kind: "Connect", hint: "TCP + TLS + protocol handshake, per connection", s: t?.connect ?? summary.connect.latency },
    {
      kind: "HTTP connect, per request",
      hint: "Each request's own TCP + TLS connect (keepAlive: false), or a kept-alive socket reopened after the server closed it",
      s: t?.httpConnect,
    },
    { kind: "Round trip", hint: "Reply received minus the message's intended send time", s: t?.roundTrip ?? summary.latency },
    { kind: "Delivery", hint: "Broadcast/group delivery to every receiver, from the intended send time", s: t?.delivery ?? summary.deliveries?.latency },
    { kind: "First message", hint: "From connected to the first message received", s: t?.firstMessage },
    { kind: "Canary", hint: "The storm scenario's canary client's round trips", s: t?.canary },
    { kind: "Closed-loop response time", hint: summary.closedLoop?.note ?? "", s: summary.closedLoop?.responseTime },
    { kind: "Send lag", hint: "How late the agent sent messages vs. their intended time (the agent's own delay)", s: summary.sendLag },
  ];
  // A closed loop has no round trips from an intended time: its empty row would read as "no latency".
  const shown = rows.filter((r) => r.s && (r.s.count > 0 || (r.kind === "Round trip" && !summary.closedLoop) || r.kind === "Connect"));
  const table = (
    <LatencyRowsTable
      caption="Latency by measured kind"
      testId="latency-kinds"
      className="kinds"
      rows={shown.map((r) => ({ name: r.kind, hint: r.hint, s: r.s! }))}
    />
  );
  if (!summary.closedLoop) return table;
  return (
    <>
      {table}
      <p className="muted" data-testid="closed-loop-note">
        Closed loop: {summary.closedLoop.note}.
      </p>
    </>
  );
}
