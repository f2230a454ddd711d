import { type BinaryLiteral, type BodyCodec, parseProto, protoType, type ProtoType } from "@volley/contracts";
import { pack, unpack } from "msgpackr";
import { asJson, NO_JSON } from "./flow-codec";

/**
 * A flow body codec at run time (see contracts flow-codec.ts): `encode` turns a rendered template
 * into what the driver sends (a JSON value it serializes itself, text, or bytes for a binary
 * frame), `decode` turns an incoming message into the value replies are matched and captured on
 * (NO_JSON when it is not one).
 */
export interface BodyCoder {
  /** json: the driver writes the body as JSON (an object on Socket.IO). */
  json: boolean;
  /** Throws EncodeError when the value cannot be encoded (a protobuf field of the wrong kind). */
  encode(value: unknown): unknown;
  decode(data: unknown): unknown;
}

/** A rendered message that its codec cannot encode: counted as errors.encode, the message not sent. */
export class EncodeError extends Error {}

/** Bytes as a Buffer, whatever view the transport handed them in (Socket.IO: ArrayBuffer, typed arrays). */
export function asBytes(data: unknown): Buffer | undefined {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

const JSON_CODER: BodyCoder = { json: true, encode: (v) => v, decode: asJson };
const TEXT_CODER: BodyCoder = { json: false, encode: (v) => v, decode: (d) => (typeof d === "string" ? d : (asBytes(d)?.toString("utf8") ?? d)) };

const MSGPACK_CODER: BodyCoder = {
  json: false,
  encode: (v) => pack(v),
  decode: (d) => {
    const bytes = asBytes(d);
    if (!bytes) return asJson(d);
    try {
      return unpack(bytes);
    } catch {
      return NO_JSON;
    }
  },
};

const TO_OBJECT = { longs: String, enums: String, bytes: String, defaults: true } as const;

function protobufCoder(type: ProtoType, replyType: ProtoType): BodyCoder {
  const name = type.fullName.replace(/^\./, "");
  return {
    json: false,
    encode: (v) => {
      try {
        const bytes = type.encode(type.fromObject(v as Record<string, unknown>)).finish();
        return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      } catch (err) {
        throw new EncodeError(`cannot encode the message as ${name}: ${(err as Error).message}`);
      }
    },
    decode: (d) => {
      const bytes = asBytes(d);
      if (!bytes) return asJson(d);
      try {
        return replyType.toObject(replyType.decode(bytes), TO_OBJECT);
      } catch {
        return NO_JSON;
      }
    },
  };
}

const compiled = new WeakMap<object, BodyCoder>();

/**
 * The coder for a message or step: its own codec, else the flow's, else json. Validation has
 * checked the .proto and its types; a plan that skipped it fails here, at compile, with the reason.
 */
export function bodyCoder(own: BodyCodec | undefined, flow: BodyCodec | undefined): BodyCoder {
  const codec = own ?? flow ?? "json";
  if (codec === "json") return JSON_CODER;
  if (codec === "text") return TEXT_CODER;
  if (codec === "msgpack") return MSGPACK_CODER;
  let coder = compiled.get(codec);
  if (coder) return coder;
  const pb = codec.protobuf;
  const proto = pb.proto ?? (typeof flow === "object" ? flow.protobuf.proto : undefined);
  const parsed = proto === undefined ? { error: "no .proto given (proto)" } : parseProto(proto);
  if ("error" in parsed) throw new Error(`flow codec protobuf: ${parsed.error}`);
  const type = protoType(parsed.root, pb.type);
  const replyType = pb.replyType === undefined ? type : protoType(parsed.root, pb.replyType);
  if (!type || !replyType) throw new Error(`flow codec protobuf: the .proto has no message type ${type ? pb.replyType : pb.type}`);
  coder = protobufCoder(type, replyType);
  compiled.set(codec, coder);
  return coder;
}

/** A binary literal's bytes. */
export const literalBytes = (b: BinaryLiteral): Buffer => ("base64" in b ? Buffer.from(b.base64, "base64") : Buffer.from(b.hex, "hex"));
