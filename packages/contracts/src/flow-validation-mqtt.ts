import type { Flow, UserStep } from "./flow";

type Path = (string | number)[];
type Issue = (path: Path, message: string) => void;

/** The literal text of a topic, templates taken out (what they render to is checked when they render). */
const literal = (topic: string) => topic.replace(/\{\{[^{}]*\}\}/g, "x");

/** A topic a flow publishes to: one topic, no wildcards, not the broker's own $ topics. */
function checkPublished(topic: string | undefined, at: Path, issue: Issue): void {
  if (topic === undefined) return;
  const t = literal(topic);
  if (t.includes("+") || t.includes("#")) issue(at, "a published topic has no wildcards (+ or #): name one topic, like devices/{{ conn.index }}/cmd");
  else if (t.startsWith("$")) issue(at, "topics starting with $ are the broker's own ($SYS): publish to your own, like devices/{{ conn.index }}/cmd");
}

/** A topic filter a flow subscribes to: + stands for one whole level, # for the rest (last level only). */
function checkFilter(filter: string | undefined, at: Path, issue: Issue, fix: string): void {
  if (filter === undefined) {
    issue(at, `on MQTT a message arrives on a subscription: ${fix}`);
    return;
  }
  const levels = literal(filter).split("/");
  levels.forEach((level, i) => {
    if (level.includes("#") && (level !== "#" || i !== levels.length - 1))
      issue(at, "# stands for every level below, so it is a whole level and the last one, like devices/#");
    else if (level.includes("+") && level !== "+") issue(at, "+ stands for one whole level, like devices/+/ack (not devices/dev+/ack)");
  });
}

/**
 * Flows on MQTT: messages PUBLISH to their `event` topic (or target.mqtt.topic), and a connection
 * receives only on the topic filters its replies, waitFor steps and push name, which it SUBSCRIBEs
 * to when it opens (templates rendered per connection, like devices/{{ conn.index }}/ack). A reply
 * or wait without a topic would never arrive: refused, naming the fix.
 */
export function checkMqttFlow(flow: Flow, issue: Issue): void {
  const fix = 'name the topic it arrives on, like event: "devices/{{ conn.index }}/ack" (the connection subscribes to it)';
  flow.setup.forEach((step, i) => {
    if ("send" in step) checkPublished(step.send.event, ["setup", i, "send", "event"], issue);
    if ("waitFor" in step) checkFilter(step.waitFor.event, ["setup", i, "waitFor", "event"], issue, fix);
  });
  flow.messages?.forEach((m, i) => {
    checkPublished(m.event, ["messages", i, "event"], issue);
    if (m.reply !== false && !m.reply.ack) checkFilter(m.reply.event, ["messages", i, "reply", "event"], issue, fix);
  });
  for (const [i, p] of (flow.push ?? []).entries()) checkFilter(p.event, ["push", i, "event"], issue, fix);
  const steps = (list: readonly UserStep[], at: Path): void =>
    list.forEach((step, i) => {
      const here = [...at, i];
      if ("send" in step) {
        checkPublished(step.send.event, [...here, "send", "event"], issue);
        if (step.send.reply) checkFilter(step.send.reply.event, [...here, "send", "reply", "event"], issue, fix);
      } else if ("waitFor" in step) checkFilter(step.waitFor.event, [...here, "waitFor", "event"], issue, fix);
      else if ("loop" in step) steps(step.loop.steps, [...here, "loop", "steps"]);
      else if ("choice" in step) for (const [k, b] of step.choice.entries()) steps(b.steps, [...here, "choice", k, "steps"]);
      else if ("if" in step) {
        steps(step.steps, [...here, "steps"]);
        if (step.else) steps(step.else, [...here, "else"]);
      }
    });
  if (flow.steps) steps(flow.steps, ["steps"]);
}
