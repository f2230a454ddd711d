import { durationMs, flowRows, type Flow, type FlowMessage, type SetupStep } from "@volley/contracts";
import { fmtDuration, fmtInt } from "../lib/format";
import { UserStepsList } from "./user-steps-list";

/** A step's name as the agent reports it (`setup.<name>` in the run's results): its own, or kind-position. */
export function stepName(step: SetupStep, position: number): string | null {
  if ("request" in step) return step.request.name ?? `request-${position}`;
  if ("send" in step) return step.send.name ?? `send-${position}`;
  if ("waitFor" in step) return step.waitFor.name ?? `waitFor-${position}`;
  return null; // think and connect are not setup.<name> metrics (connect is timed as Connect)
}

const keys = (o: Record<string, unknown> | undefined) => Object.keys(o ?? {});

function stepDetail(step: SetupStep): string {
  if ("request" in step) {
    const r = step.request;
    const captures = keys(r.capture);
    return `${r.method} ${r.url}${r.json !== undefined ? " with JSON" : r.body !== undefined ? " with a body" : ""}${captures.length ? `, captures ${captures.join(", ")}` : ""}`;
  }
  if ("connect" in step) {
    const c = step.connect;
    const parts = [
      c.auth !== undefined && "auth",
      keys(c.headers).length > 0 && `headers ${keys(c.headers).join(", ")}`,
      keys(c.query).length > 0 && `query ${keys(c.query).join(", ")}`,
    ].filter(Boolean);
    return parts.length ? `with ${parts.join("; ")}` : "to the target";
  }
  if ("send" in step) {
    const s = step.send;
    const captures = keys(s.capture);
    return `${s.event ? `event ${s.event}` : "a message"}${s.ack ? ", waits for the acknowledgement" : ""}${captures.length ? `, captures ${captures.join(", ")}` : ""}`;
  }
  if ("waitFor" in step) {
    const w = step.waitFor;
    const captures = keys(w.capture);
    const match = w.match ? ` where ${w.match.path}${w.match.equals !== undefined ? ` = ${w.match.equals}` : " exists"}` : "";
    return `${w.event ? `event ${w.event}` : "any message"}${match}, up to ${fmtDuration(durationMs(w.timeout))}${captures.length ? `, captures ${captures.join(", ")}` : ""}`;
  }
  return fmtDuration(durationMs(step.think));
}

const stepKind = (step: SetupStep) => Object.keys(step)[0]!;

/** How a message kind's reply is recognised, in words. */
export function replyRule(m: FlowMessage): string {
  const r = m.reply;
  if (r === false) return "no reply awaited (fire and forget)";
  if (r.ack) return "its acknowledgement";
  const on = r.event ? `event ${r.event}` : "the next message";
  if (!r.match) return `${on}, in order`;
  if (r.match.equals === undefined) return `${on} with ${r.match.path}`;
  return `${on} where ${r.match.path} = ${r.match.equals}`;
}

function messageWhat(m: FlowMessage): string {
  if (m.request) return `${m.request.method} ${m.request.url}`;
  if (m.event) return `event ${m.event}${m.json !== undefined ? " (JSON)" : m.text !== undefined ? " (text)" : ""}`;
  return m.json !== undefined ? "a JSON message" : m.text !== undefined ? "a text message" : "Volley's own message";
}

/**
 * The plan's flow as a read-only list beside the YAML: data, each connection's setup steps in
 * order (with the names they are reported under), then the message kinds with their share of the
 * sends and how each one's reply is recognised.
 */
export function FlowSteps({ flow }: { flow: Flow }) {
  let rows: number | null = null;
  try {
    rows = flow.data ? flowRows(flow.data).length : null;
  } catch {
    rows = null; // an unreadable CSV is the validator's to report
  }
  return (
    <div className="panel flow-steps" data-testid="flow-steps">
      <h2 className="panel-title">Flow</h2>
      {flow.data && rows !== null && (
        <p className="small">
          Data: {fmtInt(rows)} row{rows === 1 ? "" : "s"}
          {flow.data.csv !== undefined ? " (CSV)" : ""}, {flow.data.reuse ? "shared by connections" : "one per connection"}
        </p>
      )}
      {flow.steps ? (
        <>
          <h3>Each user</h3>
          <UserStepsList steps={flow.steps} />
        </>
      ) : (
        <ConnectionSteps flow={flow} />
      )}
      {flow.push && flow.push.length > 0 && (
        <>
          <h3>Server push</h3>
          <ol className="small">
            {flow.push.map((p, i) => (
              <li key={i}>
                {p.event ? `event ${p.event}` : "any unmatched message"}, timed by {p.timestamp} ({p.unit})
              </li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}

/** A connection scenario's flow: each connection's setup steps, then the message kinds. */
function ConnectionSteps({ flow }: { flow: Flow }) {
  const messages = flow.messages ?? [];
  const totalWeight = messages.reduce((n, m) => n + m.weight, 0);
  return (
    <>
      <h3>Setup, per connection</h3>
      {flow.setup.length === 0 ? (
        <p className="small muted">No steps: each connection connects, then sends.</p>
      ) : (
        <ol className="small">
          {flow.setup.map((step, i) => {
            const name = stepName(step, i + 1);
            return (
              <li key={i}>
                <span className="step-kind">{stepKind(step)}</span>
                {name && <code title={`Reported as setup.${name}`}>{name}</code>} {stepDetail(step)}
              </li>
            );
          })}
        </ol>
      )}
      <h3>Messages</h3>
      {messages.length === 0 ? (
        <p className="small muted">Volley&apos;s own messages, echoed back.</p>
      ) : (
        <ol className="small">
          {messages.map((m, i) => (
            <li key={i}>
              <code>{m.name ?? `message-${i + 1}`}</code> {messageWhat(m)}
              {messages.length > 1 && `, ${Math.round((100 * m.weight) / totalWeight)}% of sends (weight ${m.weight})`}
              <br />
              <span className="muted">reply: {replyRule(m)}</span>
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
