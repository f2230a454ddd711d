import { describe, expect, it } from "vitest";
import { parsePlanDocument, planJsonSchema, planSchema, type PlanInput } from "./index";

const PROTO = `syntax = "proto3";
package shop;
message Order { string id = 1; int32 qty = 2; repeated string tags = 3; Item item = 4; }
message Item { string sku = 1; }
message Ack { string id = 1; uint32 total = 2; }`;

const plan = (flow: object, protocol = "ws"): PlanInput =>
  ({
    name: "binary",
    target: { url: protocol === "ws" ? "ws://127.0.0.1:9/ws" : "http://127.0.0.1:9", protocol },
    connections: { count: 1, rate: 10 },
    scenario: { kind: "echo", duration: "1s", message: { rate: 1 } },
    flow,
  }) as PlanInput;

function problems(p: PlanInput): string[] {
  const r = planSchema.safeParse(p);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

const order = { id: "{{ msg.id }}", qty: "{{ msg.seq }}", item: { sku: "sku-{{ conn.index }}" } };
const byId = { match: { path: "$.id", equals: "{{ msg.id }}" } };
const protobufFlow = (pb: object, json: unknown = order) => ({ codec: { protobuf: pb }, messages: [{ json, reply: byId }] });

describe("flow body codecs", () => {
  it("accepts msgpack, protobuf and binary literals over ws", () => {
    expect(problems(plan({ codec: "msgpack", messages: [{ json: order, reply: byId }] }))).toEqual([]);
    expect(problems(plan(protobufFlow({ proto: PROTO, type: "shop.Order", replyType: "shop.Ack" })))).toEqual([]);
    expect(
      problems(
        plan({
          messages: [
            { binary: { hex: "00ff10" }, reply: false },
            { binary: { base64: "AAEC" }, reply: false },
          ],
        }),
      ),
    ).toEqual([]);
    // A message's own codec takes the flow's .proto when it gives none.
    const cancel = { codec: { protobuf: { type: "shop.Item" } }, json: { sku: "{{ msg.id }}" }, reply: false };
    expect(problems(plan({ codec: { protobuf: { proto: PROTO, type: "shop.Order" } }, messages: [{ json: order, reply: byId }, cancel] }))).toEqual([]);
  });

  it("refuses a .proto that does not parse, a type it lacks, and protoFile in a plan given as is", () => {
    expect(problems(plan(protobufFlow({ proto: "message Order { string id = 1 ", type: "Order" })))).toEqual([
      expect.stringMatching(/^flow\.codec\.protobuf\.proto: the \.proto does not parse: .*line 1/),
    ]);
    expect(problems(plan(protobufFlow({ proto: PROTO, type: "Orders", replyType: "shop.Reply" })))).toEqual([
      "flow.codec.protobuf.type: the .proto has no message type Orders: use one of shop.Order, shop.Item, shop.Ack, with its package",
      "flow.codec.protobuf.replyType: the .proto has no message type shop.Reply: use one of shop.Order, shop.Item, shop.Ack, with its package",
    ]);
    expect(problems(plan(protobufFlow({ protoFile: "shop.proto", type: "shop.Order" })))).toEqual([
      expect.stringMatching(/^flow\.codec\.protobuf\.protoFile: protoFile is read from the plan's folder by the volley CLI/),
    ]);
  });

  it("refuses a message template that does not fit its type, naming the field", () => {
    const p = problems(plan(protobufFlow({ proto: PROTO, type: "shop.Order" }, { id: 5, qty: "{{ msg.id }}", colour: "red", item: { sku: 3 }, tags: "x" })));
    expect(p).toEqual(
      expect.arrayContaining([
        'flow.messages.0.json.colour: shop.Order has no field "colour" (it has id, qty, tags, item)',
        'flow.messages.0.json.qty: qty is a number (int32): give a number or one variable that is one, like "{{ msg.seq }}" or "{{ conn.index }}"',
        "flow.messages.0.json.id: does not fit shop.Order: string expected",
      ]),
    );
    expect(problems(plan(protobufFlow({ proto: PROTO, type: "shop.Order" }, { id: "a", item: { sku: 3 } })))).toEqual([
      "flow.messages.0.json.item.sku: does not fit shop.Order: string expected",
    ]);
  });

  it("refuses binary bodies on protocols that carry text only, and bodies the codec cannot encode", () => {
    const sse = problems(
      plan(
        { codec: "msgpack", messages: [{ json: { id: "{{ msg.id }}" }, request: { method: "POST", url: "/p", json: {} }, reply: { event: "news", ...byId } }] },
        "sse",
      ),
    );
    expect(sse).toContainEqual(expect.stringMatching(/^flow\.codec: sse carries text only, so codec msgpack cannot be sent/));
    expect(problems(plan({ messages: [{ codec: "msgpack", text: "hi", reply: false }] }))).toEqual([
      "flow.messages.0.text: codec msgpack encodes a value: give the body as json: { … }",
    ]);
    expect(problems(plan({ messages: [{ binary: { hex: "0g" }, reply: false }] }))).toEqual([
      expect.stringMatching(/^flow\.messages\.0\.binary\.hex: must be hex digits|^flow\.messages\.0\.binary: /),
    ]);
    expect(problems(plan({ messages: [{ binary: { hex: "00" }, json: {}, reply: false }] }))).toEqual([
      "flow.messages.0.binary: give one body: json, text or binary",
    ]);
    // Text replies are not parsed: a path into them never matches.
    expect(problems(plan({ codec: "text", messages: [{ text: "ping {{ msg.id }}", reply: { match: { path: "$.id", equals: "{{ msg.id }}" } } }] }))).toEqual([
      "flow.messages.0.reply.match.path: codec text leaves incoming messages as text: match the whole message with path $, or use codec json to read its fields",
    ]);
    expect(problems(plan({ codec: "text", messages: [{ text: "ping", reply: { match: { path: "$", equals: "pong" } } }] }))).toEqual([]);
  });

  it("puts codec and binary in the plan's JSON Schema (the editor's completion)", () => {
    const text = JSON.stringify(planJsonSchema());
    for (const word of ['"codec"', '"msgpack"', '"protobuf"', '"replyType"', '"binary"', '"base64"', '"hex"']) expect(text).toContain(word);
  });

  it("inlines a protoFile when a CLI loads the plan (read relative to the plan), and names one it cannot read", () => {
    const doc = JSON.stringify(plan(protobufFlow({ protoFile: "shop.proto", type: "shop.Order" })));
    const read = (path: string) => {
      if (path === "shop.proto") return PROTO;
      throw Object.assign(new Error("no such file"), { code: "ENOENT" });
    };
    const ok = parsePlanDocument(doc, { readFile: read });
    expect(ok.ok && ok.plan.flow?.codec).toEqual({ protobuf: { proto: PROTO, type: "shop.Order" } });
    const missing = parsePlanDocument(doc.replace("shop.proto", "gone.proto"), { readFile: read });
    expect(missing).toEqual({
      ok: false,
      issues: [
        {
          path: "flow.codec.protobuf.protoFile",
          message: "cannot read gone.proto (ENOENT): give a path relative to the plan file, or the .proto inline as proto",
        },
      ],
    });
    // Without a reader (the API, the web app) the path is refused, pointing at proto.
    expect(parsePlanDocument(doc).ok).toBe(false);
  });
});
