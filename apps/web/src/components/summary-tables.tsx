import type { Run } from "@volley/contracts";
import { fmtInt, fmtMs, fmtPercent, fmtRate } from "../lib/format";
import { FlowTables } from "./flow-tables";
import { UsersTables } from "./users-tables";
import { LatencyKindsTable } from "./latency-kinds-table";

const ERROR_LABELS: Record<string, string> = {
  refused: "Connection refused",
  timeout: "Timed out",
  handshake: "Handshake failed",
  protocol: "Protocol error",
  closed: "Closed by server",
  /** A flow message its codec (protobuf) could not encode: not sent. */
  encode: "Could not encode",
  other: "Other",
};

/** An error class's label; flows name a failed setup step's class `setup.<step>`. */
function errorLabel(cls: string): string {
  if (cls.startsWith("setup.")) return `Setup step ${cls.slice("setup.".length)}`;
  if (cls.startsWith("step.")) return `User step ${cls.slice("step.".length)}`;
  return ERROR_LABELS[cls] ?? cls;
}

function Row({ label, value, hint, tone }: { label: string; value: string; hint?: string; tone?: "bad" | "good" }) {
  return (
    <tr>
      <th scope="row" title={hint}>
        {label}
      </th>
      <td className={`num${tone ? ` ${tone}` : ""}`}>{value}</td>
    </tr>
  );
}

/** An error class with its count, and below it the few distinct things its errors said (close codes, HTTP statuses, the server's text). */
function ErrorRows({ cls, count, samples }: { cls: string; count: number; samples: string[] }) {
  return (
    <>
      <Row label={errorLabel(cls)} hint={`errors.${cls}`} value={fmtInt(count)} tone="bad" />
      {samples.length > 0 && (
        <tr className="error-samples" data-testid={`error-samples-${cls}`}>
          <td colSpan={2}>
            <ul title="What these errors said: the first distinct ones the agents reported">
              {samples.map((t) => (
                <li key={t} className="mono">
                  {t}
                </li>
              ))}
            </ul>
          </td>
        </tr>
      )}
    </>
  );
}

/** The run summary as compact tables; live while the run runs, the stored summary once it ended. */
export function SummaryTables({ run }: { run: Run }) {
  const s = run.summary;
  if (!s) {
    return (
      <section className="panel summary-empty">
        <h2 className="panel-title">Summary</h2>
        <p className="muted">
          {run.status === "queued" || run.status === "running"
            ? "The summary fills in as soon as the first interval is stored."
            : "This run has no summary: nothing was measured."}
        </p>
      </section>
    );
  }
  const m = s.messages;
  const errors = Object.entries(s.errors)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const errorTotal = errors.reduce((n, [, v]) => n + v, 0);
  const d = s.deliveries;
  // Groups and broadcast without echo time deliveries only: their "received" is the deliveries.
  const deliveryOnly = !!d && s.latency.count === 0;
  const live = run.status === "running";

  return (
    <section className="summary" data-testid="run-summary">
      <div className="summary-head">
        <h2>Summary{live && <span className="live-tag">live</span>}</h2>
        <span className="small subtle">
          {fmtInt(s.intervals.measured)} measured second{s.intervals.measured === 1 ? "" : "s"}
          {s.intervals.warmup > 0 && `, ${fmtInt(s.intervals.warmup)} warm-up left out`}
        </span>
      </div>
      {s.leftOut && (
        // A damaged stored histogram is left out, not a failed page: say which, so no percentile is read as whole.
        <div className="banner banner-warn" role="status" data-testid="left-out">
          {s.leftOut.message}
        </div>
      )}
      {s.intervals.saturated > 0 && (
        <div className="banner banner-warn">
          The load generator was saturated in {fmtInt(s.intervals.saturated)} interval{s.intervals.saturated === 1 ? "" : "s"}: its own CPU or send lag was a
          bottleneck, so latency there includes agent delay.
          {(m.shed ?? 0) > 0 &&
            ` It fell so far behind that it gave up on ${fmtInt(m.shed!)} planned message${m.shed === 1 ? "" : "s"} unsent (shed, not counted as sent).`}{" "}
          Use more agents or a lower rate for a clean measurement.
        </div>
      )}
      <LatencyKindsTable summary={s} />
      <div className="summary-grid">
        <div className="panel flush">
          <table className="kv">
            <caption>Messages</caption>
            <tbody>
              <Row label="Sent" value={fmtInt(m.sent)} />
              {!deliveryOnly && <Row label="Replies received" value={fmtInt(m.received)} />}
              {!deliveryOnly && (
                <Row label="Replies lost" value={fmtInt(m.lost)} tone={m.lost > 0 ? "bad" : undefined} hint="No reply within the message timeout" />
              )}
              {!deliveryOnly && <Row label="Replied" value={fmtPercent(m.sent ? (100 * m.received) / m.sent : null, 2)} />}
              {d && <Row label="Deliveries due" value={fmtInt(d.expected)} hint="One per message and receiver (the other members of the room or group)" />}
              {d && <Row label="Delivered" value={fmtInt(d.received)} />}
              {d && (
                <Row label="Deliveries lost" value={fmtInt(d.lost)} tone={d.lost > 0 ? "bad" : undefined} hint="Not delivered within the message timeout" />
              )}
              {d && <Row label="Delivery ratio" value={fmtPercent(d.ratio, 2)} tone={d.ratio !== null && d.ratio < 99 ? "bad" : undefined} />}
              {d && d.duplicated > 0 && (
                <Row
                  label="Duplicate deliveries"
                  value={fmtInt(d.duplicated)}
                  tone="bad"
                  hint="deliveries.duplicated: a second copy of a message to a member that already had it"
                />
              )}
              {d && (d.lateJoiner ?? 0) > 0 && (
                <Row
                  label="Copies to late joiners"
                  value={fmtInt(d.lateJoiner!)}
                  hint="deliveries.late_joiner: copies of messages sent before the member joined the room; not due, so neither delivered nor duplicates"
                />
              )}
              {s.mqtt && (
                <Row
                  label="QoS acknowledged"
                  value={fmtInt(s.mqtt.acked)}
                  hint="mqtt.acked: publishes the broker acknowledged (PUBACK at QoS 1, PUBCOMP at QoS 2); QoS 0 has none"
                />
              )}
              {s.mqtt && s.mqtt.retained > 0 && (
                <Row
                  label="Retained copies"
                  value={fmtInt(s.mqtt.retained)}
                  hint="mqtt.retained: retained messages the broker replayed on subscribe; not sent live, so neither replies nor deliveries"
                />
              )}
              <Row label="Send rate" value={fmtRate(m.sendRate)} hint="Over measured (non-warm-up) seconds" />
              {!deliveryOnly && <Row label="Receive rate" value={fmtRate(m.receiveRate)} />}
              {d && <Row label="Delivery rate" value={fmtRate(d.rate)} />}
            </tbody>
          </table>
        </div>
        <div className="panel flush">
          <table className="kv">
            <caption>Agent and connections</caption>
            <tbody>
              <Row label="Send lag p99" value={fmtMs(s.sendLag.p99)} hint="How late messages left the agent vs. their intended time" />
              <Row label="Send lag max" value={fmtMs(s.sendLag.max)} />
              <Row label="Connect p50" value={fmtMs(s.connect.latency.p50)} />
              <Row label="Connect p95" value={fmtMs(s.connect.latency.p95)} />
              <Row label="Opened" value={fmtInt(s.connect.opened)} />
              <Row label="Failed" value={fmtInt(s.connect.failed)} tone={s.connect.failed > 0 ? "bad" : undefined} />
            </tbody>
          </table>
        </div>
        <div className="panel flush">
          <table className="kv">
            <caption>Errors{errorTotal > 0 ? ` (${fmtInt(errorTotal)})` : ""}</caption>
            <tbody>
              {errors.length === 0 ? (
                <tr>
                  <td className="muted" colSpan={2}>
                    No errors
                  </td>
                </tr>
              ) : (
                errors.map(([cls, n]) => <ErrorRows key={cls} cls={cls} count={n} samples={s.errorSamples?.[cls] ?? []} />)
              )}
            </tbody>
          </table>
        </div>
      </div>
      {s.users && <UsersTables users={s.users} />}
      {s.flow && <FlowTables flow={s.flow} plan={run.plan.flow} />}
      <div className="panel flush">
        <table className="table thresholds">
          <caption>Thresholds{live ? " (so far)" : ""}</caption>
          <tbody>
            {s.thresholds.length === 0 ? (
              <tr>
                <td className="muted">No thresholds in this plan. Add e.g. “latency.p95 &lt; 200ms” to make the run pass or fail.</td>
              </tr>
            ) : (
              s.thresholds.map((t, i) => (
                <tr key={`${t.expression}-${i}`}>
                  <td className="verdict">
                    <span className={`badge ${t.ok ? "badge-passed" : "badge-failed"}`}>{t.ok ? "pass" : "fail"}</span>
                  </td>
                  <td className="mono">{t.kind === "sanity" ? <span title="A default check (the plan's sanity field)">{t.expression}</span> : t.expression}</td>
                  <td className={t.ok ? "muted" : "bad"}>{t.message}</td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
