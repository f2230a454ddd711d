import type { Flow, FlowSummary } from "@volley/contracts";
import { LatencyRowsTable } from "./latency-rows-table";
import { fmtInt, fmtPercent } from "../lib/format";
import { stepName } from "./flow-steps";
import { StepsTable } from "./steps-table";

/** Setup steps in the plan's order (the summary has them in the order frames first carried them). */
function inPlanOrder(setup: FlowSummary["setup"], plan: Flow | undefined): FlowSummary["setup"] {
  const order = new Map((plan?.setup ?? []).map((step, i) => [stepName(step, i + 1), i]));
  const rank = (step: string) => order.get(step) ?? Number.MAX_SAFE_INTEGER;
  return [...setup].sort((a, b) => rank(a.step) - rank(b.step));
}

/**
 * A flow run's own results (plan `flow`): each setup step's count, failures and time (apart from
 * message latency), incoming messages per event, and a few of the messages that answered nothing,
 * shown as the server sent them (as text: React escapes it, so markup in a sample stays text).
 */
export function FlowTables({ flow, plan }: { flow: FlowSummary; plan?: Flow }) {
  const setup = inPlanOrder(flow.setup, plan);
  const received = flow.events.reduce((n, e) => n + e.received, 0);
  return (
    <div className="flow-tables" data-testid="flow-summary">
      <StepsTable
        caption="Setup steps"
        testId="flow-setup"
        steps={setup}
        empty="No timed setup steps (the connect itself is timed as Connect above)."
        hint="Timed from the step's start to its end, per connection; never mixed into message latency"
        errorPrefix="setup."
      />
      <div className="flow-grid">
        <div className="panel flush">
          <table className="table" data-testid="flow-events">
            <caption>Events received{received > 0 ? ` (${fmtInt(received)}, ${fmtPercent((100 * flow.unmatched) / received, 1)} unmatched)` : ""}</caption>
            <thead>
              <tr>
                <th>Event</th>
                <th className="num">Received</th>
                <th className="num" title="Answered no message of the run (not a reply, not timed push)">
                  Unmatched
                </th>
              </tr>
            </thead>
            <tbody>
              {flow.events.length === 0 ? (
                <tr>
                  <td className="muted" colSpan={3}>
                    No messages received.
                  </td>
                </tr>
              ) : (
                flow.events.map((e) => (
                  <tr key={e.event}>
                    <th scope="row" className="mono">
                      {e.event}
                    </th>
                    <td className="num">{fmtInt(e.received)}</td>
                    <td className={`num${e.unmatched > 0 ? " warn" : ""}`}>{fmtInt(e.unmatched)}</td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </div>
        {(flow.kinds?.length || flow.push) && <KindsTable flow={flow} />}
      </div>
      <div className="panel flush">
        <table className="table samples" data-testid="flow-samples">
          <caption>Unmatched samples{flow.unmatched > 0 ? ` (${fmtInt(flow.samples.length)} of ${fmtInt(flow.unmatched)})` : ""}</caption>
          <tbody>
            {flow.samples.length === 0 ? (
              <tr>
                <td className="muted">{flow.unmatched > 0 ? "No samples were stored." : "Every message received answered one sent: nothing unmatched."}</td>
              </tr>
            ) : (
              flow.samples.map((s, i) => (
                <tr key={`${s.event}-${i}`}>
                  <th scope="row" className="mono sample-event">
                    {s.event}
                  </th>
                  <td>
                    <pre className="sample-data">{s.data}</pre>
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** Each message kind's round trip, and server push timed by the server's own stamp. */
function KindsTable({ flow }: { flow: FlowSummary }) {
  const rows = [
    ...(flow.kinds ?? []).map((k) => ({ name: k.kind, hint: "Round trip of this message kind, from its intended send time", s: k.latency })),
    ...(flow.push ? [{ name: "push", hint: "Server push: receive time minus the server's stamp (includes the clocks' offset)", s: flow.push.latency }] : []),
  ];
  return (
    <LatencyRowsTable caption="Latency by message kind" testId="flow-kinds" rows={rows} mono>
      {flow.push && flow.push.clockAhead > 0 && (
        <p className="small subtle flow-note">{fmtInt(flow.push.clockAhead)} push stamps were ahead of the agent's clock and not timed.</p>
      )}
    </LatencyRowsTable>
  );
}
