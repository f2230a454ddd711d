import type { z } from "zod";
import { durationMs } from "./duration";
import type { Plan } from "./plan";
import { checkUserConnections } from "./user-connections";

const USER_PROTOCOLS = new Set(["ws", "socketio", "socketcluster", "stomp", "mqtt", "sockjs", "sse", "long-polling", "short-polling", "http"]);

/**
 * Scenario kind `users` and `flow.steps` belong together: users run steps (not setup and
 * messages), arrive by rate (a sweep steps that rate; connections.stages do not apply). Each refusal says what to
 * write instead.
 */
export function validateUsers(plan: Plan, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
  const { flow } = plan;
  const scenario = plan.scenario;
  if (scenario.kind !== "users") {
    if (flow?.steps) issue(["flow", "steps"], "are a user's steps: set scenario.kind: users (users arrive and leave), or use flow.setup and flow.messages");
    return;
  }
  if (scenario.stages) {
    const total = scenario.stages.reduce((n, st) => n + durationMs(st.duration), 0);
    if (total > durationMs(scenario.duration))
      issue(["scenario", "duration"], `is shorter than the stages (${total / 1000}s together): set duration to at least ${total / 1000}s`);
    if (scenario.arrivalRate === 0 && scenario.stages.every((st) => st.target === 0))
      issue(["scenario", "stages"], "no user would ever arrive: give a stage a target above 0");
  } else if (scenario.arrivalRate === 0 && plan.sweep?.from === undefined)
    issue(["scenario", "arrivalRate"], "must be above 0 (users per second), or ramp it up with stages");
  if (!flow?.steps || flow.steps.length === 0) {
    issue(["flow", "steps"], "a users scenario runs each user's steps: add flow: { steps: [{ connect: {} }, { send: { json: {…}, reply: { match: {…} } } }] }");
    return;
  }
  if (flow.setup.length > 0) issue(["flow", "setup"], "users run flow.steps from their arrival: move these steps to the start of flow.steps");
  if (flow.messages) issue(["flow", "messages"], "users send in their steps: write each message as a { send: {…} } step in flow.steps");
  if (flow.push) issue(["flow", "push"], "server push timing is for connection scenarios: remove push (or wait for the event with a waitFor step)");
  if (plan.sweep && scenario.stages) issue(["sweep"], "steps the arrival rate itself: remove scenario.stages, or remove sweep and ramp with the stages");
  if (plan.connections.stages)
    issue(["connections", "stages"], "users arrive at scenario.arrivalRate: remove stages (connections.count is the most users at once)");
  checkUserConnections(plan, USER_PROTOCOLS, issue);
  if (!USER_PROTOCOLS.has(plan.target.protocol))
    issue(
      ["target", "protocol"],
      `users over ${plan.target.protocol} are not supported yet: use ws, socketio, socketcluster, stomp, mqtt, sockjs, sse, long-polling, short-polling or http (or a connection scenario with a flow)`,
    );
}
