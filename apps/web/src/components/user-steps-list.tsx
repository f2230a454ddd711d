import { durationMs, userStepName, userStepPosition, type Think, type UserStep } from "@volley/contracts";
import { fmtDuration } from "../lib/format";

const keys = (o: Record<string, unknown> | undefined) => Object.keys(o ?? {});

function thinkText(t: Think): string {
  if (typeof t === "number" || typeof t === "string") return fmtDuration(durationMs(t));
  if ("min" in t) return `${fmtDuration(durationMs(t.min))} to ${fmtDuration(durationMs(t.max))} (uniform)`;
  return `mean ${fmtDuration(durationMs(t.mean))} (${t.distribution}${t.stddev !== undefined ? `, sd ${fmtDuration(durationMs(t.stddev))}` : ""})`;
}

function detail(step: UserStep): string {
  if ("request" in step)
    return `${step.request.method} ${step.request.url}${keys(step.request.capture).length ? `, captures ${keys(step.request.capture).join(", ")}` : ""}`;
  if ("connect" in step) {
    const c = step.connect;
    // A connection of its own (a feed beside the socket): what it is and where it goes.
    const own = [c.protocol, c.url].filter(Boolean).join(" ");
    return [own, c.reconnect && `reconnects (${c.reconnect.policy}, up to ${c.reconnect.maxAttempts} tries)`].filter(Boolean).join(", ");
  }
  if ("send" in step) {
    const s = step.send;
    const reply = s.ack
      ? ", waits for the acknowledgement"
      : s.reply
        ? `, waits for ${s.reply.event ?? "a message"}${s.reply.match ? ` where ${s.reply.match.path}${s.reply.match.equals !== undefined ? ` = ${s.reply.match.equals}` : ""}` : ""}`
        : "";
    return `${s.event ? `event ${s.event}` : "a message"}${reply}${keys(s.capture).length ? `, captures ${keys(s.capture).join(", ")}` : ""}`;
  }
  if ("waitFor" in step) return `${step.waitFor.event ?? "any message"}, up to ${fmtDuration(durationMs(step.waitFor.timeout))}`;
  if ("think" in step) return thinkText(step.think);
  if ("loop" in step)
    return [step.loop.count !== undefined && `${step.loop.count} times`, step.loop.over !== undefined && `for ${step.loop.over}`]
      .filter(Boolean)
      .join(", at most ");
  if ("if" in step) return `${step.if.var}${step.if.equals !== undefined ? ` = ${String(step.if.equals)}` : " is set"}`;
  return "";
}

/** The connection a step names, when it names one (user-connections.ts: none is the user's first). */
function namedConnection(step: UserStep): string | undefined {
  if ("connect" in step) return step.connect.connection;
  if ("send" in step) return step.send.connection;
  if ("waitFor" in step) return step.waitFor.connection;
  if ("disconnect" in step && step.disconnect !== true) return step.disconnect.connection;
  return undefined;
}

function ConnectionTag({ step, name }: { step: UserStep; name: string }) {
  const opens = "connect" in step;
  return (
    <span
      className="muted"
      title={opens ? `Opens the connection ${name}; its metrics are connections.opened.${name}, connect.time.${name}` : `On the connection ${name}`}
    >
      {opens ? `opens ${name}` : `on ${name}`}
    </span>
  );
}

/**
 * A users plan's steps as a nested, read-only list, each timed step with the name it is reported
 * under (step.<name>, the same naming the agent uses), the connection it names when the user
 * holds several, loops, choices and conditions indented.
 */
export function UserStepsList({ steps, where = "" }: { steps: readonly UserStep[]; where?: string }) {
  return (
    <ol className="small user-steps">
      {steps.map((step, i) => {
        const position = userStepPosition(where, i);
        const name = userStepName(step, position);
        const kind = Object.keys(step)[0]!;
        const on = namedConnection(step);
        return (
          <li key={position}>
            <span className="step-kind">{kind}</span>
            {name && <code title={`Reported as step.${name}`}>{name}</code>} {on && <ConnectionTag step={step} name={on} />} {detail(step)}
            {"loop" in step && <UserStepsList steps={step.loop.steps} where={position} />}
            {"choice" in step &&
              step.choice.map((b, k) => (
                <div key={k}>
                  <span className="muted">weight {b.weight}:</span>
                  <UserStepsList steps={b.steps} where={`${position}-${k + 1}`} />
                </div>
              ))}
            {"if" in step && (
              <>
                <UserStepsList steps={step.steps} where={`${position}-then`} />
                {step.else && (
                  <div>
                    <span className="muted">else:</span>
                    <UserStepsList steps={step.else} where={`${position}-else`} />
                  </div>
                )}
              </>
            )}
          </li>
        );
      })}
    </ol>
  );
}
