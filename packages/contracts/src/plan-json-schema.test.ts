import { describe, expect, it } from "vitest";
import { planJsonSchema } from "./plan-json-schema";

describe("planJsonSchema", () => {
  it("describes every top-level plan field and every scenario kind and protocol", () => {
    const s = planJsonSchema() as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(s.properties)).toEqual(expect.arrayContaining(["name", "target", "connections", "scenario", "sweep", "thresholds", "agents"]));
    expect(s.required).toEqual(expect.arrayContaining(["name", "target", "connections", "scenario"]));
    const text = JSON.stringify(s);
    for (const kind of ["echo", "broadcast", "groups", "storm", "http-rps"]) expect(text).toContain(`"const":"${kind}"`);
    const agents = (s.properties.agents as { properties: Record<string, unknown> }).properties;
    expect(JSON.stringify(agents.count)).toContain('"const":"all"');
    for (const protocol of ["ws", "socketio", "sockjs", "stomp", "sse", "long-polling", "short-polling", "http", "socketcluster"])
      expect(text).toContain(`"${protocol}"`);
    // The editor completes target options from here: the Socket.IO parser choice included.
    const target = (s.properties.target as { properties: Record<string, { properties: Record<string, unknown> }> }).properties;
    expect(target.socketio!.properties.parser).toMatchObject({ enum: ["default", "msgpack"], default: "default" });
  });

  it("describes the flow: data, every setup step kind with its fields, messages with reply and match, push", () => {
    type Node = { properties?: Record<string, Node>; items?: Node; anyOf?: Node[] };
    const flow = (planJsonSchema() as Node).properties!.flow!;
    expect(Object.keys(flow.properties!)).toEqual(expect.arrayContaining(["data", "setup", "messages", "samples", "push"]));
    expect(Object.keys(flow.properties!.data!.properties!)).toEqual(expect.arrayContaining(["rows", "csv", "reuse"]));
    const steps = flow.properties!.setup!.items!.anyOf!.map((s) => Object.keys(s.properties!)[0]);
    expect(steps).toEqual(["request", "connect", "send", "waitFor", "think"]);
    const step = (kind: string) => Object.keys(flow.properties!.setup!.items!.anyOf!.find((s) => s.properties![kind])!.properties![kind]!.properties ?? {});
    expect(step("request")).toEqual(expect.arrayContaining(["name", "method", "url", "headers", "json", "body", "capture", "expect"]));
    expect(step("connect")).toEqual(expect.arrayContaining(["headers", "query", "auth"]));
    expect(step("send")).toEqual(expect.arrayContaining(["event", "json", "ack", "capture", "timeout"]));
    expect(step("waitFor")).toEqual(expect.arrayContaining(["event", "match", "timeout", "capture"]));
    const message = flow.properties!.messages!.items!.properties!;
    expect(Object.keys(message)).toEqual(expect.arrayContaining(["name", "weight", "event", "json", "text", "args", "request", "reply"]));
    const reply = message.reply!.anyOf!.find((r) => r.properties)!.properties!;
    expect(Object.keys(reply)).toEqual(["ack", "event", "match"]);
    expect(Object.keys(reply.match!.properties!)).toEqual(["path", "equals"]);
  });
});
