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
    for (const protocol of ["ws", "socketio", "sockjs", "stomp", "sse", "long-polling", "short-polling", "http", "socketcluster"]) expect(text).toContain(`"${protocol}"`);
  });
});
