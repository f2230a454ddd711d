import type { AgentBreakdown as Agent } from "@volley/contracts";
import { fmtInt, fmtMs } from "../lib/format";

/** One row per agent: what it sent and measured, and how hard it worked (saturation flagged). */
export function AgentBreakdown({ agents }: { agents: Agent[] }) {
  if (agents.length === 0) return <p className="muted">No agent reported any interval for this run.</p>;
  // Groups and broadcast without echo time no round trips: show what their receivers got instead.
  const deliveryOnly = agents.every((a) => a.latency.count === 0 && a.delivery);
  const received = (a: Agent) => (deliveryOnly ? a.delivery!.received : a.received);
  const lost = (a: Agent) => (deliveryOnly ? a.delivery!.lost : a.lost);
  const latency = (a: Agent) => (deliveryOnly ? a.delivery!.latency : a.latency);
  return (
    <div className="table-scroll">
      <table className="table" data-testid="agent-breakdown">
        <thead>
          <tr>
            <th>Agent</th>
            <th className="num">Sent</th>
            <th className="num">{deliveryOnly ? "Delivered" : "Received"}</th>
            <th className="num">Lost</th>
            <th className="num">Errors</th>
            <th className="num">{deliveryOnly ? "Delivery p50" : "p50"}</th>
            <th className="num">{deliveryOnly ? "Delivery p99" : "p99"}</th>
            <th className="num">Connect p95</th>
            <th className="num">CPU max</th>
            <th className="num">Loop delay max</th>
            <th className="num">Send lag max</th>
            <th>Health</th>
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => (
            <tr key={a.agentId}>
              <td>
                {a.agentName ? (
                  <>
                    <strong>{a.agentName}</strong> <span className="mono subtle small">{a.agentId}</span>
                  </>
                ) : (
                  <span className="mono">{a.agentId}</span>
                )}
                <div className="subtle small">
                  {fmtInt(a.shards)} shard{a.shards === 1 ? "" : "s"}, {fmtInt(a.intervals)} intervals
                </div>
              </td>
              <td className="num">{fmtInt(a.sent)}</td>
              <td className="num">{fmtInt(received(a))}</td>
              <td className={`num${lost(a) > 0 ? " bad" : ""}`}>{fmtInt(lost(a))}</td>
              <td className={`num${a.errors > 0 ? " bad" : ""}`}>{fmtInt(a.errors)}</td>
              <td className="num">{fmtMs(latency(a).p50)}</td>
              <td className="num">{fmtMs(latency(a).p99)}</td>
              <td className="num">{fmtMs(a.connect.p95)}</td>
              <td className="num">{Math.round(a.health.cpuMax)}%</td>
              <td className="num">{fmtMs(a.health.eventLoopMaxMs)}</td>
              <td className="num">{fmtMs(a.health.sendLagMaxMs)}</td>
              <td>
                {a.saturated > 0 ? (
                  <span
                    className="badge badge-failed"
                    title="The agent's own CPU, event loop or send lag was over its limits: latency in those seconds includes agent delay"
                  >
                    saturated {fmtInt(a.saturated)} s
                  </span>
                ) : (
                  <span className="badge badge-passed">healthy</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
