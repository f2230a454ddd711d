import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePlanDocument, validatePlan } from "./plan-document";
import { planJsonSchema } from "./plan-json-schema";

function withTarget(target: Record<string, unknown>) {
  return validatePlan({ name: "t", target, connections: { count: 1 }, scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" } });
}

const problems = (r: ReturnType<typeof withTarget>): string[] => (r.ok ? [] : r.issues.map((p) => `${p.path}: ${p.message}`));

describe("target.stomp over SockJS", () => {
  it("accepts an http(s):// SockJS endpoint, with or without transports", () => {
    expect(problems(withTarget({ url: "http://127.0.0.1:8080/ws", protocol: "stomp" }))).toEqual([]);
    const r = withTarget({ url: "https://chat.example.com/ws", protocol: "stomp", stomp: { transports: ["xhr-streaming", "xhr-polling"] } });
    expect(r.ok && r.plan.target.stomp?.transports).toEqual(["xhr-streaming", "xhr-polling"]);
    expect(problems(withTarget({ url: "ws://127.0.0.1:9004/stomp", protocol: "stomp", stomp: {} }))).toEqual([]);
  });

  it("refuses transports on a plain WebSocket URL, an unknown transport, and names the schemes stomp takes", () => {
    expect(problems(withTarget({ url: "ws://127.0.0.1:9004/stomp", protocol: "stomp", stomp: { transports: ["websocket"] } }))).toEqual([
      "target.stomp.transports: SockJS transports apply to an http(s):// SockJS endpoint, and this URL is a plain WebSocket one: remove transports, or give the endpoint's http(s):// URL",
    ]);
    expect(problems(withTarget({ url: "http://h/ws", protocol: "stomp", stomp: { transports: ["jsonp-polling"] } }))[0]).toMatch(
      /^target\.stomp\.transports\.0: .*websocket.*xhr-streaming.*xhr-polling/,
    );
    expect(problems(withTarget({ url: "http://h/ws", protocol: "stomp", stomp: { transports: [] } }))[0]).toMatch(/^target\.stomp\.transports: /);
    expect(problems(withTarget({ url: "http://h/ws#chat", protocol: "sockjs" }))).toEqual([
      "target.url: a SockJS endpoint's URL takes no #fragment: remove it",
    ]);
    for (const url of ["http://h/ws#chat", "ws://h/stomp#x"])
      expect(problems(withTarget({ url, protocol: "stomp" }))).toEqual(["target.url: a STOMP endpoint's URL takes no #fragment: remove it"]);
  });

  it("the editor's completion offers stomp.transports with the SockJS transport names", () => {
    const target = (planJsonSchema() as { properties: { target: { properties: Record<string, { properties?: Record<string, unknown> }> } } }).properties.target;
    expect(JSON.stringify(target.properties.stomp?.properties?.transports)).toContain("xhr-streaming");
  });

  it("examples/stomp-sockjs-chat.yaml is a valid plan", () => {
    const r = parsePlanDocument(readFileSync(new URL("../../../examples/stomp-sockjs-chat.yaml", import.meta.url), "utf8"));
    expect(r.ok ? [] : r.issues).toEqual([]);
    expect(r.ok && r.plan.target).toMatchObject({ protocol: "stomp", url: "http://127.0.0.1:9016/ws" });
  });
});
