import { describe, expect, it } from "vitest";
import { parsePlanDocument } from "./plan-document";
import { TEMPLATES } from "./templates";

describe("built-in templates", () => {
  it("are the six of the design, the flow starter, virtual users and MQTT fan-out, each a valid plan", () => {
    expect(TEMPLATES.map((t) => t.id)).toEqual([
      "broadcast-sweep",
      "ping-throughput",
      "concurrency-storm",
      "group-location",
      "http-rps",
      "capacity-search",
      "app-flow",
      "virtual-users",
      "mqtt-fanout",
    ]);
    for (const t of TEMPLATES) {
      const r = parsePlanDocument(t.yaml);
      expect(r.ok ? [] : r.issues, t.id).toEqual([]);
      expect(t.title.length).toBeGreaterThan(0);
      expect(t.description.length).toBeGreaterThan(0);
    }
  });

  it("point at the reference servers and use the scenario each benchmark needs", () => {
    const plans = Object.fromEntries(TEMPLATES.map((t) => [t.id, parsePlanDocument(t.yaml)]));
    const plan = (id: string) => {
      const r = plans[id]!;
      if (!r.ok) throw new Error(id);
      return r.plan;
    };
    expect(plan("broadcast-sweep").scenario.kind).toBe("broadcast");
    expect(plan("broadcast-sweep").sweep?.stopWhen).toMatchObject({ max: "5s", p95: "200ms" });
    expect(plan("concurrency-storm").scenario.kind).toBe("storm");
    expect(plan("group-location").connections.stages).toHaveLength(3);
    expect(plan("http-rps").target.protocol).toBe("http");
    expect(plan("capacity-search").sweep?.stopWhen).toEqual({ p95: "200ms" });
    // The flow starter: JSON events, each reply matched by the id the message carries.
    expect(plan("app-flow").flow?.messages?.[0]?.reply).toEqual({ event: "chat", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } });
    expect(plan("mqtt-fanout").target).toMatchObject({ protocol: "mqtt", url: "ws://127.0.0.1:9017/mqtt" });
    expect(plan("mqtt-fanout").scenario).toMatchObject({ kind: "broadcast", echo: true });
    for (const t of TEMPLATES) expect(new URL(plan(t.id).target.url).port).toMatch(/^(900[1-6]|9017)$/);
  });
});
