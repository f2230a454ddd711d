import protobuf from "protobufjs";
import type { Flow, UserStep } from "./flow";
import { type BodyCodec, isBinaryCodec, parseProto, type ProtoType, protoType, protoTypeNames } from "./flow-codec";
import type { Protocol } from "./target";
import { stepProtocols } from "./user-connections";

type Path = (string | number)[];
type Issue = (path: Path, message: string) => void;

/** Protocols whose drivers carry bytes: binary WebSocket frames, Socket.IO binary attachments, MQTT payloads. */
const BINARY_PROTOCOLS: readonly Protocol[] = ["ws", "socketio", "mqtt"];

const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/;
/** Variables that render as text: never the whole of a number field. */
const TEXT_VARS = /^(msg\.id|random\.uuid|random\.hex|conn\.room|random\.pick\(.*\))$/;
/** One captured value or data column, whole: it may be a list or an object. */
const CAPTURED = /^\{\{\s*(vars|data)\.[\w.-]+\s*\}\}$/;
const NUMBER_TYPES = new Set(["double", "float", "int32", "uint32", "sint32", "fixed32", "sfixed32", "int64", "uint64", "sint64", "fixed64", "sfixed64"]);

interface Body {
  codec?: BodyCodec;
  json?: unknown;
  text?: string;
  binary?: unknown;
}

/**
 * Flow bodies against their codecs: a binary codec only where the protocol carries bytes, a body
 * the codec can encode, and for protobuf a .proto that parses, types it declares, and message
 * templates that fit their type (checked as protobufjs's Type.verify does, with each {{ variable }}
 * standing for a value of its field's type). Issues name the field and the fix.
 */
export function checkFlowCodecs(flow: Flow & { codec?: BodyCodec }, targetProtocol: Protocol, issue: Issue): void {
  // Not const: a user's step is checked against the protocol of the connection it uses (user-connections.ts).
  let protocol = targetProtocol;
  const protocolOf = stepProtocols(flow.steps ?? [], targetProtocol);
  const flowCodec = flow.codec;
  const flowProto = typeof flowCodec === "object" ? flowCodec.protobuf.proto : undefined;
  const reported = new Set<string>();
  /** The codec's types (encode, reply), problems reported once at the codec's own path. */
  const types = (codec: BodyCodec | undefined, at: Path): { type?: ProtoType; replyType?: ProtoType } => {
    if (typeof codec !== "object") return {};
    const pb = codec.protobuf;
    const quiet = reported.has(at.join("."));
    reported.add(at.join("."));
    const say: Issue = (p, m) => quiet || issue([...at, "protobuf", ...p], m);
    if (pb.protoFile !== undefined && pb.proto === undefined) {
      say(
        ["protoFile"],
        "protoFile is read from the plan's folder by the volley CLI and volley-agent run when they load the plan; a plan sent over the API or saved in the app gives the .proto text inline as proto",
      );
      return {};
    }
    if (pb.protoFile !== undefined) say(["protoFile"], "give proto or protoFile, not both");
    const proto = pb.proto ?? flowProto;
    if (proto === undefined) {
      say(["proto"], 'give the .proto text as proto: "syntax = \\"proto3\\"; message …" (or in flow.codec, for every message)');
      return {};
    }
    const parsed = parseProto(proto);
    if ("error" in parsed) {
      say([pb.proto === undefined ? "type" : "proto"], `the .proto does not parse: ${parsed.error}`);
      return {};
    }
    const find = (name: string, field: string): ProtoType | undefined => {
      const t = protoType(parsed.root, name);
      if (!t) {
        const names = protoTypeNames(parsed.root);
        say([field], `the .proto has no message type ${name}: use one of ${names.join(", ") || "(none: declare a message)"}, with its package`);
      }
      return t;
    };
    const type = find(pb.type, "type");
    const replyType = pb.replyType === undefined ? type : find(pb.replyType, "replyType");
    return { type, replyType };
  };
  const protocolFits = (codec: BodyCodec | undefined, binary: boolean, at: Path) => {
    if ((isBinaryCodec(codec) || binary) && !BINARY_PROTOCOLS.includes(protocol)) {
      const what = binary ? "a binary body" : `codec ${typeof codec === "object" ? "protobuf" : codec}`;
      issue(at, `${protocol} carries text only, so ${what} cannot be sent: use json or text bodies (binary bodies travel over ws, socketio and mqtt)`);
    }
  };
  if (flowCodec !== undefined) {
    protocolFits(flowCodec, false, ["codec"]);
    types(flowCodec, ["codec"]);
  }

  /** An outgoing body (a message, a send) at `at`. */
  const body = (b: Body, at: Path) => {
    if (b.codec !== undefined) protocolFits(b.codec, false, [...at, "codec"]);
    const codec = b.codec ?? flowCodec ?? "json";
    const codecAt = b.codec !== undefined ? [...at, "codec"] : ["codec"];
    if (b.binary !== undefined) {
      protocolFits(undefined, true, [...at, "binary"]);
      if (b.json !== undefined || b.text !== undefined) issue([...at, "binary"], "give one body: json, text or binary");
      if (b.codec !== undefined) issue([...at, "codec"], "a binary body is sent as its bytes: remove codec");
      return;
    }
    if (codec === "text" && b.json !== undefined) issue([...at, "json"], "codec text sends the text body: give text, or use codec json or msgpack");
    if (isBinaryCodec(codec) && b.text !== undefined)
      issue([...at, "text"], `codec ${typeof codec === "object" ? "protobuf" : codec} encodes a value: give the body as json: { … }`);
    const { type } = types(codec, codecAt);
    if (type && b.json !== undefined) checkTemplate(type, b.json, [...at, "json"], issue);
  };
  /** Text replies are not parsed: a path into them would never match. */
  const textMatch = (codec: BodyCodec | undefined, matchPath: string | undefined, at: Path) => {
    if (codec === "text" && matchPath !== undefined && matchPath !== "$")
      issue(at, "codec text leaves incoming messages as text: match the whole message with path $, or use codec json to read its fields");
  };
  /** An incoming message decoded with the codec at `at` (a waitFor). */
  const incoming = (codec: BodyCodec | undefined, at: Path, matchPath?: string) => {
    textMatch(codec ?? flowCodec, matchPath, [...at, "match", "path"]);
    if (codec === undefined) return;
    protocolFits(codec, false, [...at, "codec"]);
    types(codec, [...at, "codec"]);
  };

  flow.setup.forEach((step, i) => {
    if ("send" in step) body(step.send, ["setup", i, "send"]);
    if ("waitFor" in step) incoming(step.waitFor.codec, ["setup", i, "waitFor"], step.waitFor.match?.path);
  });
  flow.messages?.forEach((m, i) => {
    body(m, ["messages", i]);
    if (m.reply !== false) textMatch(m.codec ?? flowCodec, m.reply.match?.path, ["messages", i, "reply", "match", "path"]);
  });
  const steps = (list: readonly UserStep[], at: Path): void =>
    list.forEach((step, i) => {
      const here = [...at, i];
      protocol = protocolOf(step);
      if ("send" in step) {
        body(step.send, [...here, "send"]);
        textMatch(step.send.codec ?? flowCodec, step.send.reply?.match?.path, [...here, "send", "reply", "match", "path"]);
      } else if ("waitFor" in step) incoming(step.waitFor.codec, [...here, "waitFor"], step.waitFor.match?.path);
      else if ("loop" in step) steps(step.loop.steps, [...here, "loop", "steps"]);
      else if ("choice" in step) for (const [j, b] of step.choice.entries()) steps(b.steps, [...here, "choice", j, "steps"]);
      else if ("if" in step) {
        steps(step.steps, [...here, "steps"]);
        if (step.else) steps(step.else, [...here, "else"]);
      }
    });
  if (flow.steps) steps(flow.steps, ["steps"]);
}

/** A message template against its protobuf type: unknown fields, templates in fields they cannot fill, then Type.verify. */
function checkTemplate(type: ProtoType, template: unknown, at: Path, issue: Issue): void {
  const probe = probeMessage(type, template, at, issue);
  if (probe === undefined) return;
  const problem = type.verify(probe);
  if (!problem) return;
  // verify says "field.sub: integer expected".
  const m = /^([\w.]+): (.*)$/.exec(problem);
  const where = m ? m[1]!.split(".") : [];
  issue([...at, ...where], `does not fit ${type.fullName.replace(/^\./, "")}: ${m ? m[2] : problem}`);
}

function probeMessage(type: ProtoType, value: unknown, at: Path, issue: Issue): Record<string, unknown> | undefined {
  const name = type.fullName.replace(/^\./, "");
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    issue(at, `${name} is a message: give an object of its fields (${Object.keys(type.fields).join(", ")})`);
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const field = type.fields[key];
    if (!field) {
      issue([...at, key], `${name} has no field "${key}" (it has ${Object.keys(type.fields).join(", ") || "none"})`);
      continue;
    }
    const here = [...at, key];
    if (field instanceof protobuf.MapField) {
      if (v !== null && typeof v === "object" && !Array.isArray(v))
        out[key] = Object.fromEntries(Object.entries(v).map(([mk, mv]) => [mk, probeValue(field, mv, [...here, mk], issue)]));
      else out[key] = v;
    } else if (field.repeated) {
      if (typeof v === "string" && v.includes("{{")) {
        if (!CAPTURED.test(v)) issue(here, `${key} is a repeated field: give a list, like [ "{{ msg.id }}" ], or one captured list, like "{{ vars.tags }}"`);
        out[key] = [];
      } else out[key] = Array.isArray(v) ? v.map((x, i) => probeValue(field, x, [...here, i], issue)) : v;
    } else out[key] = probeValue(field, v, here, issue);
  }
  return out;
}

/** What stands for a value at verification: a {{ variable }} becomes a value of its field's type. */
function probeValue(field: protobuf.Field, v: unknown, at: Path, issue: Issue): unknown {
  const rt = field.resolvedType;
  // A captured object or a data column may fill a message field: checked when it is encoded.
  if (rt instanceof protobuf.Type) return typeof v === "string" && CAPTURED.test(v) ? {} : (probeMessage(rt, v, at, issue) ?? {});
  // protobufjs's fromObject (what the agent encodes with) takes enum names and 64-bit numbers as text; verify wants numbers.
  if (rt instanceof protobuf.Enum && typeof v === "string" && !v.includes("{{")) {
    if (Object.hasOwn(rt.values, v)) return rt.values[v];
    issue(at, `${field.name} is the enum ${rt.name}: use one of ${Object.keys(rt.values).join(", ")} (or its number)`);
    return 0;
  }
  if (typeof v === "string" && /^-?\d+$/.test(v) && /64$/.test(field.type)) return Number(v);
  if (typeof v !== "string" || !v.includes("{{")) return v;
  if (rt instanceof protobuf.Enum) return Object.values(rt.values)[0] ?? 0;
  if (field.type === "bool") return true;
  if (NUMBER_TYPES.has(field.type)) {
    const whole = WHOLE.exec(v);
    if (!whole || TEXT_VARS.test(whole[1]!))
      issue(at, `${field.name} is a number (${field.type}): give a number or one variable that is one, like "{{ msg.seq }}" or "{{ conn.index }}"`);
    return 0;
  }
  return "";
}
