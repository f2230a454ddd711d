import protobuf from "protobufjs";
import { z } from "zod";

/**
 * How a flow's message bodies travel (`codec` on flow, a message, a send or a waitFor; absent:
 * the flow's, else `json`). The body is still written as a JSON-like template (`json:`), rendered,
 * then encoded; replies are decoded with the same codec before they are matched, so `$.id` reads
 * a decoded msgpack or protobuf field.
 *
 * - `json` (today's): JSON text frames; replies parsed as JSON when they are.
 * - `text`: the `text` body as is; replies are not parsed (match the whole message with `$`).
 * - `msgpack`: the rendered value as MessagePack, in binary frames.
 * - `{ protobuf: { proto, type, replyType } }`: the rendered value as protobuf message `type`;
 *   replies decoded as `replyType` (default `type`). `proto` is the .proto text; `protoFile` a path
 *   the CLIs (`volley`, `volley-agent run`) read relative to the plan file and inline as `proto`
 *   (a plan sent over the API carries it inline: the hub cannot read your disk).
 *
 * Anything else binary: a `binary: { base64 } | { hex }` literal body, sent as is.
 */

const MAX_PROTO_LENGTH = 200_000;
const typeName = z
  .string()
  .max(200)
  .regex(/^\.?[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/, "name a message type of the .proto, with its package, like shop.Order");

export const protobufCodecSchema = z.strictObject({
  /** The .proto text (proto2 or proto3); absent on a message or step: flow.codec's. */
  proto: z.string().max(MAX_PROTO_LENGTH, `must be at most ${MAX_PROTO_LENGTH} characters`).optional(),
  /** A .proto file, relative to the plan file: inlined as `proto` by the CLIs when they load the plan. */
  protoFile: z.string().min(1).max(500).optional(),
  /** The message type a body is encoded as, like shop.Order. */
  type: typeName,
  /** The message type replies (and waited-for messages) are decoded as; absent: `type`. */
  replyType: typeName.optional(),
});
export type ProtobufCodec = z.output<typeof protobufCodecSchema>;

export const bodyCodecSchema = z.union([z.enum(["json", "text", "msgpack"]), z.strictObject({ protobuf: protobufCodecSchema })], {
  error: 'a codec is json, text, msgpack or { protobuf: { proto: "syntax = \\"proto3\\"; …", type: "pkg.Message" } }',
});
export type BodyCodec = z.output<typeof bodyCodecSchema>;

export const binaryLiteralSchema = z.union(
  [
    z.strictObject({
      base64: z
        .string()
        .max(1_000_000)
        .regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be base64 (A–Z, a–z, 0–9, + and /, = padding)"),
    }),
    z.strictObject({
      hex: z
        .string()
        .max(1_000_000)
        .regex(/^([0-9a-fA-F]{2})*$/, "must be hex digits, two per byte, like 0a1b"),
    }),
  ],
  { error: 'a binary body is { base64: "AAEC" } or { hex: "000102" }' },
);
export type BinaryLiteral = z.output<typeof binaryLiteralSchema>;

/** Codecs whose bodies are bytes (binary frames). */
export const isBinaryCodec = (codec: BodyCodec | undefined): boolean => codec === "msgpack" || (typeof codec === "object" && "protobuf" in codec);

export type ProtoRoot = protobuf.Root;
export type ProtoType = protobuf.Type;

const parsed = new Map<string, { root: ProtoRoot } | { error: string }>();

/** Parses .proto text (field names kept as written), cached: plans are validated often (the editor, each shard). */
export function parseProto(proto: string): { root: ProtoRoot } | { error: string } {
  let got = parsed.get(proto);
  if (!got) {
    try {
      const root = protobuf.parse(proto, { keepCase: true }).root;
      root.resolveAll();
      got = { root };
    } catch (err) {
      got = { error: (err as Error).message };
    }
    if (parsed.size >= 32) parsed.delete(parsed.keys().next().value!);
    parsed.set(proto, got);
  }
  return got;
}

/** Every message type a .proto declares, by full name (pkg.Message). */
export function protoTypeNames(root: ProtoRoot): string[] {
  const names: string[] = [];
  const walk = (ns: protobuf.NamespaceBase) => {
    for (const n of ns.nestedArray) {
      if (n instanceof protobuf.Type) names.push(n.fullName.replace(/^\./, ""));
      if (n instanceof protobuf.Namespace || n instanceof protobuf.Type) walk(n);
    }
  };
  walk(root);
  return names;
}

/** Message type `name` of the .proto, or undefined. */
export function protoType(root: ProtoRoot, name: string): ProtoType | undefined {
  const found = root.lookup(name.replace(/^\./, ""));
  return found instanceof protobuf.Type ? found : undefined;
}

/**
 * The CLIs' half of protoFile: every `protobuf: { protoFile }` under the document's flow read with
 * `read` (the plan file's folder) and put in as `proto`, before validation. Returns what could not be read.
 */
export function inlineProtoFiles(doc: unknown, read: (path: string) => string): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  const walk = (v: unknown, path: string[]): void => {
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, [...path, String(i)]);
      return;
    }
    if (v === null || typeof v !== "object") return;
    const o = v as Record<string, unknown>;
    const pb = o.protobuf as Record<string, unknown> | undefined;
    if (pb && typeof pb === "object" && typeof pb.protoFile === "string" && pb.proto === undefined) {
      try {
        pb.proto = read(pb.protoFile);
        delete pb.protoFile;
      } catch (err) {
        const code = (err as { code?: string }).code;
        issues.push({
          path: [...path, "protobuf", "protoFile"].join("."),
          message: `cannot read ${pb.protoFile}${code ? ` (${code})` : ""}: give a path relative to the plan file, or the .proto inline as proto`,
        });
      }
    }
    for (const [k, x] of Object.entries(o)) walk(x, [...path, k]);
  };
  if (doc !== null && typeof doc === "object") walk((doc as Record<string, unknown>).flow, ["flow"]);
  return issues;
}
