import { PlanImportError } from "./import-error";
import type { ArtilleryCapture, ArtilleryResponse, Step } from "./artillery-schema";
import { convertText, convertValue, type TemplateScope } from "./artillery-templates";
import type { MessageInput, SetupInput } from "./message-shapes";

/** Artillery flow steps, one at a time: what an emit or send carries and awaits, HTTP steps, names. */

/** Artillery's seconds as a Volley duration: 2 → "2s", 0.5 → "500ms". */
/** The flow steps that are HTTP requests. */
export const HTTP_STEPS = ["get", "post", "put", "patch", "delete", "head"];

export const secs = (seconds: number) => (Number.isInteger(seconds) ? `${seconds}s` : `${Math.round(seconds * 1000)}ms`);

/** A raw WebSocket message's own name for itself, like { type: "ping" }. */
export function jsonType(out: Outgoing): string | undefined {
  const type = (out.body.json as { type?: unknown } | undefined)?.type;
  return typeof type === "string" && !type.includes("{{") ? type : undefined;
}

export function thinkSeconds(step: Step, where: string): number {
  const s = Number(step.think);
  if (!Number.isFinite(s) || s < 0) throw new PlanImportError(`${where}: think takes seconds, like think: 1 or think: 0.5 (got ${JSON.stringify(step.think)})`);
  return s;
}

export function loopCount(step: Step): number {
  if (typeof step.count === "number") return step.count;
  if (Array.isArray(step.over)) return step.over.length;
  return Infinity;
}

export const setupNames = (steps: SetupInput[]) =>
  steps.map((s) => {
    const v: unknown = Object.values(s)[0];
    return typeof v === "object" && v !== null ? (v as { name?: string }).name : undefined;
  });

export function uniqueName(names: (string | undefined)[], raw: string): string {
  const base =
    raw
      .replace(/[^A-Za-z0-9_-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 50) || "step";
  const taken = new Set(names);
  let n = base;
  for (let k = 2; taken.has(n); k++) n = `${base}-${k}`;
  return n;
}

export interface Outgoing {
  event?: string;
  namespace?: string;
  body: Pick<MessageInput, "event" | "json" | "text" | "args">;
  ack: boolean;
  ackCapture?: Captures;
  response?: { event?: string; match?: { path: string; equals?: string }; capture?: Captures };
}

/** An emit (socketio: { channel, data } or [event, ...args]) or send (ws: text, JSON, or { payload }). */
export function outgoing(step: Step, protocol: "ws" | "socketio", scope: TemplateScope): Outgoing {
  if ("send" in step) {
    const raw = step.send;
    const wrapped =
      typeof raw === "object" && raw !== null && "payload" in raw ? (raw as { payload: unknown; match?: unknown; capture?: ArtilleryCapture }) : undefined;
    const payload = convertValue(wrapped ? wrapped.payload : raw, scope);
    const response =
      wrapped && (wrapped.match !== undefined || wrapped.capture !== undefined)
        ? convertResponse({ match: wrapped.match as never, capture: wrapped.capture }, scope)
        : undefined;
    return { body: typeof payload === "string" ? { text: payload } : { json: payload as never }, ack: false, ...(response ? { response } : {}) };
  }
  const emit = step.emit;
  let event: string;
  let args: unknown[];
  let namespace: string | undefined;
  let responseRaw = step.response as ArtilleryResponse | undefined;
  let ackRaw = step.acknowledge as ArtilleryResponse | undefined;
  if (Array.isArray(emit)) {
    event = String(emit[0]);
    args = (emit as unknown[]).slice(1);
  } else {
    const e = emit as { channel?: string; data?: unknown; namespace?: string; response?: ArtilleryResponse; acknowledge?: ArtilleryResponse };
    if (!e?.channel) throw new PlanImportError(`${scope.where}: emit needs a channel (emit: { channel: chat, data: … }) or the list form emit: [chat, data]`);
    event = e.channel;
    args = e.data === undefined ? [] : [e.data];
    namespace = e.namespace;
    responseRaw ??= e.response;
    ackRaw ??= e.acknowledge;
  }
  if (protocol !== "socketio") throw new PlanImportError(`${scope.where}: emit is a socketio step; a ws scenario sends with send:`);
  const converted = convertValue(args, scope);
  const [first, ...rest] = converted;
  const body: Outgoing["body"] = { event, json: (first ?? {}) as never, ...(rest.length > 0 ? { args: rest as never[] } : {}) };
  const response = responseRaw ? convertResponse(responseRaw, scope) : undefined;
  if (responseRaw?.data !== undefined && responseRaw.match !== undefined)
    scope.notes.push(`${scope.where}: the expected response data is not compared beside its match (only the match is)`);
  const ack = convertResponse(ackRaw ?? {}, scope);
  if (ack.match)
    scope.notes.push(
      `${scope.where}: the acknowledgement's match (${ack.match.path}${ack.match.equals !== undefined ? ` = ${ack.match.equals}` : ""}) is not compared: the ack is timed and captured, not checked`,
    );
  return {
    event,
    ...(namespace ? { namespace } : {}),
    body,
    ack: ackRaw !== undefined,
    ...(ack.capture ? { ackCapture: ack.capture } : {}),
    ...(response ? { response } : {}),
  };
}

function convertResponse(r: ArtilleryResponse & { on?: string }, scope: TemplateScope): NonNullable<Outgoing["response"]> {
  const event = r.channel ?? r.on;
  const m = Array.isArray(r.match) ? r.match[0] : r.match;
  // Artillery checks that the response's data equals `data`: the whole payload matched against it.
  const data = m === undefined && r.data !== undefined ? (typeof r.data === "string" ? r.data : JSON.stringify(r.data)) : undefined;
  const match = m
    ? { path: m.json, ...(m.value !== undefined ? { equals: convertText(String(m.value), scope) } : {}) }
    : data !== undefined
      ? { path: "$", equals: convertText(data, scope) }
      : undefined;
  const capture = captures(r.capture, scope);
  return { ...(event ? { event } : {}), ...(match ? { match } : {}), ...(capture ? { capture } : {}) };
}

/** An imported step's captures, as the plan writes them. */
type Captures = Record<string, string | { header: string } | { json: string; pick: "random" }>;

const DRAWN_INDEX = /^(\$.*?)\[\s*\{\{[^{}]*\}\}\s*\]$/;

function captures(c: ArtilleryCapture | undefined, scope: TemplateScope): Captures | undefined {
  if (!c) return undefined;
  const out: Captures = {};
  for (const one of Array.isArray(c) ? c : [c]) {
    const drawn = one.json === undefined ? null : DRAWN_INDEX.exec(one.json);
    if (drawn && !drawn[1]!.includes("{{")) {
      // An item of a list at an index drawn per user: the same as one item drawn at random.
      out[one.as] = { json: drawn[1]!, pick: "random" };
      scope.notes.push(
        `${scope.where}: capture ${one.as} reads ${one.json}, an item at an index drawn per user: it captures one item of the list at ${drawn[1]} drawn at random (pick: random), every index equally likely (an index past the list's end, which finds nothing in Artillery, never comes)`,
      );
    } else if (one.json?.includes("{{")) {
      // Volley's capture paths are fixed (compiled once): a path drawn per user has no equivalent.
      const fixed = one.json.replace(/\{\{[^{}]*\}\}/g, "0");
      out[one.as] = fixed;
      scope.notes.push(
        `${scope.where}: capture ${one.as} reads ${one.json}, a path made by a template; capture paths are fixed, so it reads ${fixed}: vary the data instead`,
      );
    } else if (one.json) out[one.as] = one.json;
    else if (one.header) out[one.as] = { header: one.header };
    else {
      scope.notes.push(
        `${scope.where}: capture ${one.as} uses ${one.regexp ? "regexp" : "a form"} Volley does not capture with (JSON path or header); left out`,
      );
      continue;
    }
    scope.captures.add(one.as);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export function httpStep(method: string, spec: Record<string, unknown>, scope: TemplateScope): SetupInput {
  const url = convertText(String(spec.url ?? "/"), scope);
  const capture = captures(spec.capture as ArtilleryCapture | undefined, scope);
  return {
    request: {
      // Named by the URL's last written segment (a segment that is only a template names nothing).
      name:
        (
          url
            .split("?")[0]!
            .replace(/\{\{[^{}]*\}\}/g, "")
            .split("/")
            .filter(Boolean)
            .pop() ?? method
        )
          .replace(/[^A-Za-z0-9_-]+/g, "-")
          .replace(/^-+|-+$/g, "")
          .slice(0, 60) || method,
      method: method.toUpperCase() as "GET",
      url,
      ...(spec.headers ? { headers: convertValue(spec.headers as Record<string, string>, scope) } : {}),
      ...(spec.json !== undefined ? { json: convertValue(spec.json, scope) as never } : {}),
      ...(typeof spec.body === "string" ? { body: convertText(spec.body, scope) } : {}),
      ...(capture ? { capture } : {}),
    },
  };
}
