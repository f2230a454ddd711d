import type { Flow } from "./flow";
import type { Plan } from "./plan";
import { defaultConnectionName, stepConnectionName, userConnections, walkUserSteps } from "./user-connections";

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
 * or wait without a topic would never arrive: refused, naming the fix. A user's steps are checked
 * where they use an MQTT connection (the target's, or one a connect step opens with protocol: mqtt).
 */
export function checkMqttFlow(plan: Pick<Plan, "target" | "flow">, issue: Issue): void {
  const flow = plan.flow as Flow;
  const fix = 'name the topic it arrives on, like event: "devices/{{ conn.index }}/ack" (the connection subscribes to it)';
  if (plan.target.protocol === "mqtt") {
    flow.setup.forEach((step, i) => {
      if ("send" in step) checkPublished(step.send.event, ["setup", i, "send", "event"], issue);
      if ("waitFor" in step) checkFilter(step.waitFor.event, ["setup", i, "waitFor", "event"], issue, fix);
    });
    flow.messages?.forEach((m, i) => {
      checkPublished(m.event, ["messages", i, "event"], issue);
      if (m.reply !== false && !m.reply.ack) checkFilter(m.reply.event, ["messages", i, "reply", "event"], issue, fix);
    });
    for (const [i, p] of (flow.push ?? []).entries()) checkFilter(p.event, ["push", i, "event"], issue, fix);
  }
  // A user's steps on each of its MQTT connections (a user may hold several, on other protocols too).
  const steps = flow.steps ?? [];
  const connections = userConnections(plan);
  const fallback = defaultConnectionName(steps);
  const onMqtt = (name: string | undefined) => (connections.get(name ?? fallback)?.protocol ?? plan.target.protocol) === "mqtt";
  for (const { step, path } of walkUserSteps(steps, ["steps"])) {
    if (!onMqtt(stepConnectionName(step, fallback))) continue;
    if ("send" in step) {
      checkPublished(step.send.event, [...path, "send", "event"], issue);
      if (step.send.reply) checkFilter(step.send.reply.event, [...path, "send", "reply", "event"], issue, fix);
    } else if ("waitFor" in step) checkFilter(step.waitFor.event, [...path, "waitFor", "event"], issue, fix);
  }
}
