import type { LatencySummary, RunSummary } from "@volley/contracts";
import { fmtInt, fmtMs } from "../lib/format";

/** One row per measured kind (connect, round trip, delivery, first message, canary, send lag), same columns for each; kinds with no samples are left out. */
export function LatencyKindsTable({ summary }: { summary: RunSummary }) {
  const t = summary.timings;
  const rows: { kind: string; hint: string; s: LatencySummary | undefined }[] = [
    { kind: "Connect", hint: "TCP + TLS + protocol handshake, per connection", s: t?.connect ?? summary.connect.latency },
    { kind: "Round trip", hint: "Reply received minus the message's intended send time", s: t?.roundTrip ?? summary.latency },
    { kind: "Delivery", hint: "Broadcast/group delivery to every receiver, from the intended send time", s: t?.delivery ?? summary.deliveries?.latency },
    { kind: "First message", hint: "From connected to the first message received", s: t?.firstMessage },
    { kind: "Canary", hint: "The storm scenario's canary client's round trips", s: t?.canary },
    { kind: "Send lag", hint: "How late the agent sent messages vs. their intended time (the agent's own delay)", s: summary.sendLag },
  ];
  const shown = rows.filter((r) => r.s && (r.s.count > 0 || r.kind === "Round trip" || r.kind === "Connect"));
  return (
    <div className="panel flush">
      <table className="table kinds" data-testid="latency-kinds">
        <caption>Latency by measured kind</caption>
        <thead>
          <tr>
            <th>Kind</th>
            <th className="num">Samples</th>
            <th className="num">min</th>
            <th className="num">p50</th>
            <th className="num">p90</th>
            <th className="num">p95</th>
            <th className="num">p99</th>
            <th className="num">max</th>
          </tr>
        </thead>
        <tbody>
          {shown.map(({ kind, hint, s }) => (
            <tr key={kind}>
              <th scope="row" title={hint}>
                {kind}
              </th>
              <td className="num">{fmtInt(s!.count)}</td>
              <td className="num">{fmtMs(s!.min)}</td>
              <td className="num">{fmtMs(s!.p50)}</td>
              <td className="num">{fmtMs(s!.p90)}</td>
              <td className="num">{fmtMs(s!.p95)}</td>
              <td className="num">{fmtMs(s!.p99)}</td>
              <td className="num">{fmtMs(s!.max)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
