import type { FlowInput } from "@volley/contracts";
import type { Phase, Step } from "./artillery-schema";
import { HTTP_STEPS, httpStep, jsonType, loopCount, outgoing, secs, thinkSeconds, uniqueName } from "./artillery-steps";
import type { TemplateScope } from "./artillery-templates";

type UserStepInput = NonNullable<FlowInput["steps"]>[number];

/** An Artillery loop without a count runs until the user's time is up: here, at most this long. */
const OPEN_LOOP = "30s";

/** Users' arrivals from config.phases: the first phase's rate, then a stage line with a step (0 s) where a phase starts at a new rate. */
export interface UserArrivalPlan {
  arrivalRate: number;
  stages?: { duration: string; target: number }[];
  seconds: number;
  maxVusers?: number;
}

/**
 * config.phases as users' arrivals, exactly: a phase at a constant rate (arrivalRate, or
 * arrivalCount over its duration) holds it, a rampTo moves linearly to it, a pause has none; the
 * rate steps (a 0 s stage) where a phase begins at a rate other than the last. Undefined when a
 * phase has no length or rate to follow (the caller falls back to connections).
 */
export function userArrivals(phases: Phase[] | undefined): UserArrivalPlan | undefined {
  if (!phases || phases.length === 0) return undefined;
  const stages: { duration: string; target: number }[] = [];
  let rate: number | undefined;
  let seconds = 0;
  let maxVusers: number | undefined;
  const round = (n: number) => Math.round(n * 1e6) / 1e6;
  // A phase that begins at a rate other than the last one's end steps to it (a 0 s stage).
  const stepTo = (target: number) => {
    if (rate !== undefined && rate !== target) stages.push({ duration: "0s", target });
    rate = target;
  };
  const line = (from: number, target: number, d: number) => {
    stepTo(from);
    stages.push({ duration: secs(d), target });
    rate = target;
  };
  for (const p of phases) {
    if (p.pause !== undefined) {
      if (!(p.pause > 0)) return undefined;
      line(0, 0, p.pause);
      seconds += p.pause;
      continue;
    }
    if (p.duration === undefined || !(p.duration > 0)) return undefined;
    const start = p.arrivalCount !== undefined ? p.arrivalCount / p.duration : p.arrivalRate;
    if (start === undefined || start < 0) return undefined;
    line(round(start), round(p.rampTo ?? start), p.duration);
    seconds += p.duration;
    if (p.maxVusers !== undefined) maxVusers = Math.max(maxVusers ?? 0, p.maxVusers);
  }
  const first = phases[0]!;
  const arrivalRate = round(first.pause !== undefined ? 0 : first.arrivalCount !== undefined ? first.arrivalCount / first.duration! : (first.arrivalRate ?? 0));
  // One constant phase needs no stages: the rate for the duration.
  const constant = phases.length === 1 && first.rampTo === undefined && first.pause === undefined;
  if (arrivalRate === 0 && stages.every((st) => st.target === 0)) return undefined;
  return { arrivalRate, ...(constant ? {} : { stages }), seconds, ...(maxVusers !== undefined ? { maxVusers } : {}) };
}

/**
 * One Artillery scenario's flow as a user's steps, step for step: think, emit/send (with the
 * response or acknowledgement it waits for, and its captures), loop (count, or `over` a list: one
 * pass per element), HTTP requests; a connect before the first step on the connection. What has
 * no equivalent is named in the notes, never dropped silently.
 */
export function artilleryUserSteps(
  flow: Step[],
  protocol: "ws" | "socketio",
  scope: TemplateScope,
  where: string,
  names: string[] = [],
): { steps: UserStepInput[]; namespace?: string } {
  const steps: UserStepInput[] = [];
  let namespace: string | undefined;
  flow.forEach((step, i) => {
    const at = `${where}[${i}]`;
    scope.where = at;
    // An emit or send may share its step with other keys (Artillery's step-level `namespace:` first).
    const kind = "emit" in step ? "emit" : "send" in step ? "send" : Object.keys(step)[0];
    if (typeof step.namespace === "string") namespace ??= step.namespace;
    if (kind === "think") steps.push({ think: secs(thinkSeconds(step, at)) });
    else if (kind === "emit" || kind === "send") {
      const out = outgoing(step, protocol, scope);
      namespace ??= out.namespace;
      const name = uniqueName(names, out.event ?? jsonType(out) ?? "send");
      names.push(name);
      const awaited = out.ack
        ? { ack: true, ...(out.ackCapture ? { capture: out.ackCapture } : {}) }
        : out.response
          ? {
              reply: { ...(out.response.event ? { event: out.response.event } : {}), ...(out.response.match ? { match: out.response.match } : {}) },
              ...(out.response.capture ? { capture: out.response.capture } : {}),
            }
          : {};
      steps.push({ send: { name, ...out.body, ...awaited } } as UserStepInput);
    } else if (kind === "loop") {
      const count = loopCount(step);
      // Inside a loop $loopCount reads the user's send counter (msg.seq).
      const outer = scope.inLoop;
      scope.inLoop = true;
      const inner = artilleryUserSteps(step.loop as Step[], protocol, scope, `${at}.loop`, names);
      scope.inLoop = outer;
      namespace ??= inner.namespace;
      if (!Number.isFinite(count)) scope.notes.push(`${at}: a loop without count runs for ${OPEN_LOOP} per user here (loop.over); set its count or over`);
      steps.push({ loop: Number.isFinite(count) ? { count, steps: inner.steps } : { over: OPEN_LOOP, steps: inner.steps } });
    } else if (HTTP_STEPS.includes(kind!)) {
      const { request } = httpStep(kind!, step[kind!] as Record<string, unknown>, scope) as { request: { name: string } };
      request.name = uniqueName(names, request.name);
      names.push(request.name);
      steps.push({ request } as UserStepInput);
    } else if (kind === "connect" && typeof step.connect === "string")
      scope.notes.push(`${at}: connect to ${step.connect} — set target.url to it if it differs`);
    else if (kind === "namespace") namespace ??= String(step.namespace);
    else scope.notes.push(`${at}: "${kind}" has no Volley equivalent (functions and custom code do not carry over); left out`);
  });
  return { steps, ...(namespace ? { namespace } : {}) };
}

/**
 * Puts the connect a ws/socketio user needs before its first step on the connection (after the
 * requests and think times that lead up to it, whose captures it may use), in every branch.
 */
export function withConnect(steps: UserStepInput[], connect: Record<string, unknown>): UserStepInput[] {
  const onConnection = (s: UserStepInput) => "send" in s || "waitFor" in s || "loop" in s || "choice" in s || "if" in s;
  const at = steps.findIndex(onConnection);
  if (at === -1) return steps;
  return [...steps.slice(0, at), { connect } as UserStepInput, ...steps.slice(at)];
}
