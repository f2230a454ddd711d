import {
  compileJsonPath,
  compileText,
  compileValue,
  type Flow,
  type FlowMessage,
  type JsonPath,
  type Match,
  type Plan,
  type TemplateContext,
  type UserStep,
} from "@volley/contracts";
import type { BinaryLiteral, BodyCodec } from "@volley/contracts";
import type { OutMessage } from "../drivers/driver";
import { bodyCoder, literalBytes } from "./body-codec";

type Render<T> = (ctx: TemplateContext) => T;

/** An incoming message's test: its event, and the value at a path (equal to a rendered value). */
export interface CompiledMatch {
  event: string | undefined;
  path: JsonPath | undefined;
  /** The value the path must equal; undefined: the path only has to exist. */
  equals: Render<string> | undefined;
  /** equals is exactly the message id: a reply names its message (and its sender) itself. */
  byId: boolean;
  /** The incoming message as the value `path` reads (its codec's decode; NO_JSON when it is none). */
  decode: (data: unknown) => unknown;
}

export interface CompiledKind {
  name: string;
  /** Cumulative weight, for the weighted pick. */
  upTo: number;
  render: Render<OutMessage>;
  /** false: fire and forget; "ack": the acknowledgement; else an incoming message. */
  reply: false | "ack" | CompiledMatch;
  request: FlowMessage["request"];
  /**
   * HTTP targets: the request's own response is the reply (`reply` is then "ack", settled by the
   * response, never matched against other traffic) when it passes this check (path, equals).
   */
  response?: CompiledMatch;
}

/**
 * A plan's flow compiled once per shard: every template a function, every path a reader, so the
 * hot path renders and matches without parsing anything but the incoming message.
 */
export interface FlowProgram {
  flow: Flow;
  kinds: CompiledKind[];
  totalWeight: number;
  /** Events a driver without a catch-all (Socket.IO 2) must listen for. */
  listen: string[];
  /** flow.push: server push timed by its own stamp (µs per stamp unit). */
  push: { event: string | undefined; stamp: JsonPath; unitUs: number }[];
  /** flow.codec's decode, for messages no kind claims (push). */
  decode: (data: unknown) => unknown;
}

const UNIT_US = { ms: 1000, s: 1_000_000, us: 1 } as const;

export function compileMatch(match: Match | undefined, event: string | undefined, decode: (data: unknown) => unknown): CompiledMatch {
  const equals = match?.equals;
  return {
    decode,
    event,
    path: match ? compileJsonPath(match.path) : undefined,
    equals: equals === undefined ? undefined : compileText(equals),
    byId: equals !== undefined && /^\{\{\s*msg\.id\s*\}\}$/.test(equals.trim()),
  };
}

type Outgoing = {
  event?: string;
  json?: unknown;
  text?: string;
  binary?: BinaryLiteral;
  codec?: BodyCodec;
  args?: unknown[];
  headers?: Record<string, string>;
  qos?: 0 | 1 | 2;
};

/** A message's or send's body rendered and encoded with its codec (m.codec, else `flowCodec`); throws EncodeError. */
export function compileOutgoing(m: Outgoing, flowCodec: BodyCodec | undefined): Render<OutMessage> {
  const coder = bodyCoder(m.codec, flowCodec);
  const bytes = m.binary ? literalBytes(m.binary) : undefined;
  const template = m.json !== undefined ? compileValue(m.json) : m.text !== undefined ? compileText(m.text) : () => "";
  const body: Render<unknown> = bytes ? () => bytes : coder.json ? template : (ctx) => coder.encode(template(ctx));
  const args = m.args?.map(compileValue);
  const headers = m.headers ? Object.entries(m.headers).map(([k, v]) => [k, compileText(v)] as const) : undefined;
  // A destination may be per connection or per message (STOMP /queue/reply-{{ conn.index }}).
  const event = m.event?.includes("{{") ? compileText(m.event) : () => m.event;
  const json = m.json !== undefined && !bytes && coder.json;
  return (ctx) => {
    const out: OutMessage = { event: event(ctx), body: body(ctx), json };
    if (args) out.args = args.map((a) => a(ctx));
    if (headers) out.headers = Object.fromEntries(headers.map(([k, v]) => [k, v(ctx)]));
    if (m.qos !== undefined) out.qos = m.qos;
    return out;
  };
}

/** The events a user's steps wait for (replies, waitFor), in every branch and loop. */
function stepEvents(steps: readonly UserStep[]): string[] {
  return steps.flatMap((s): string[] => {
    if ("send" in s) return s.send.reply?.event ? [s.send.reply.event] : [];
    if ("waitFor" in s) return s.waitFor.event ? [s.waitFor.event] : [];
    if ("loop" in s) return stepEvents(s.loop.steps);
    if ("choice" in s) return s.choice.flatMap((b) => stepEvents(b.steps));
    if ("if" in s) return [...stepEvents(s.steps), ...stepEvents(s.else ?? [])];
    return [];
  });
}

export function compileFlow(plan: Plan): FlowProgram | undefined {
  const flow = plan.flow;
  if (!flow) return undefined;
  let upTo = 0;
  const kinds = (flow.messages ?? []).map((m, i): CompiledKind => {
    upTo += m.weight;
    const responseIsReply = plan.target.protocol === "http" && m.request !== undefined && m.reply !== false;
    const decode = bodyCoder(m.codec, flow.codec).decode;
    const reply = m.reply === false ? false : m.reply.ack || responseIsReply ? "ack" : compileMatch(m.reply.match, m.reply.event, decode);
    const kind: CompiledKind = { name: m.name ?? `message-${i + 1}`, upTo, render: compileOutgoing(m, flow.codec), reply, request: m.request };
    if (responseIsReply && m.reply !== false) kind.response = compileMatch(m.reply.match, undefined, decode);
    return kind;
  });
  const listen = new Set<string>();
  for (const k of kinds) if (k.reply && k.reply !== "ack" && k.reply.event) listen.add(k.reply.event);
  for (const s of flow.setup) if ("waitFor" in s && s.waitFor.event) listen.add(s.waitFor.event);
  for (const e of stepEvents(flow.steps ?? [])) listen.add(e);
  const push = (flow.push ?? []).map((p) => ({ event: p.event, stamp: compileJsonPath(p.timestamp), unitUs: UNIT_US[p.unit] }));
  for (const p of push) if (p.event) listen.add(p.event);
  return { flow, kinds, totalWeight: upTo, listen: [...listen], push, decode: bodyCoder(undefined, flow.codec).decode };
}
