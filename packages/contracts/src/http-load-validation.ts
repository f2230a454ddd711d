import type { z } from "zod";
import { durationMs } from "./duration";
import type { Flow } from "./flow";
import type { Plan } from "./plan";

/**
 * The http-rps scenario's closed loop and exact request count: each refused where the engine
 * could not keep its promise (a sweep steps an open loop's rate; stages retire users mid-request),
 * and an exact count that the open loop's rate could not send within `duration`.
 */
export function validateHttpLoad(plan: Pick<Plan, "scenario" | "connections" | "sweep" | "agents"> & { flow?: Flow }, ctx: z.RefinementCtx): void {
  const s = plan.scenario;
  if (s.kind !== "http-rps") return;
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
  const closed = s.loop === "closed";
  if (!closed && durationMs(s.thinkTime) > 0)
    issue(["scenario", "thinkTime"], "only a closed loop thinks between requests (an open loop sends at message.rate): remove thinkTime or set loop: closed");
  if (closed) {
    if (plan.sweep) issue(["scenario", "loop"], "a sweep steps an open loop's rate: set loop: open, or remove sweep");
    if (plan.connections.stages)
      issue(["scenario", "loop"], "a closed loop keeps connections.count users for the whole run: remove connections.stages, or set loop: open");
    if (plan.flow) issue(["scenario", "loop"], "a closed loop runs Volley's own requests, not a flow's: remove flow, or set loop: open");
  }
  if (s.requests === undefined) return;
  if (plan.sweep) issue(["scenario", "requests"], "a sweep sends for each step's hold, not an exact count: remove requests, or remove sweep");
  if (plan.connections.stages) issue(["scenario", "requests"], "stages set how long the run lasts: remove requests, or remove connections.stages");
  const agents = plan.agents.count;
  if (typeof agents === "number" && s.requests < agents)
    issue(["scenario", "requests"], `is split across the ${agents} agents: send at least one per agent (requests: ${agents}), or lower agents.count`);
  if (closed) return; // a closed loop's pace is the server's: duration only caps it
  const rate = s.message.per === "connection" ? s.message.rate * plan.connections.count : s.message.rate;
  // Poisson arrivals send rate × duration only on average: leave a tenth more, plus a second.
  const needS = s.message.arrival === "poisson" ? Math.ceil((1.1 * s.requests) / rate) + 1 : Math.ceil(s.requests / rate);
  if (needS * 1000 > durationMs(s.duration)) {
    issue(
      ["scenario", "requests"],
      `at ${fmt(rate)} requests/s, ${fmt(s.requests)} requests need about ${needS}s of sending but duration is ${typeof s.duration === "number" ? `${s.duration}ms` : s.duration}: set duration: ${needS}s or more, or raise message.rate`,
    );
  }
}

const fmt = (n: number) => (Math.round(n * 1000) / 1000).toLocaleString("en-US");
