import { describe, expect, it } from "vitest";
import { validatePlan } from "./plan-document";
import { planJsonSchema } from "./plan-json-schema";

const target = { url: "ws://127.0.0.1:8080/mqtt", protocol: "mqtt" };
const echo = { kind: "echo", message: { rate: 1 }, duration: "1s" };
const plan = (flow: Record<string, unknown>, scenario: Record<string, unknown> = echo, t: Record<string, unknown> = target) =>
  validatePlan({ name: "t", target: t, connections: { count: 1 }, scenario, flow });
const users = (steps: unknown[]) =>
  validatePlan({ name: "t", target, connections: { count: 5 }, scenario: { kind: "users", arrivalRate: 5, duration: "2s" }, flow: { steps } });
const problems = (r: ReturnType<typeof plan>): string[] => (r.ok ? [] : r.issues.map((p) => `${p.path}: ${p.message}`));

describe("flows over mqtt", () => {
  it("accepts topics per message (templates, msg.* too), QoS per message, replies on a subscribed filter", () => {
    const r = plan({
      messages: [
        {
          event: "devices/{{ conn.index }}/cmd/{{ msg.seq }}",
          qos: 1,
          json: { ref: "{{ msg.id }}" },
          reply: { event: "devices/{{ conn.index }}/ack", match: { path: "$.ref", equals: "{{ msg.id }}" } },
        },
        { text: "ping", qos: 2, reply: { event: "devices/+/said/#" } },
        { binary: { hex: "00ff" }, reply: false },
        { event: "devices/{{ conn.index }}/bin", codec: "msgpack", json: { ref: "{{ msg.id }}" }, reply: { event: "devices/{{ conn.index }}/bin-ack" } },
      ],
    });
    expect(problems(r)).toEqual([]);
    expect(r.ok && r.plan.flow?.messages?.map((m) => m.qos)).toEqual([1, 2, undefined, undefined]);
  });

  it("refuses wildcards in a published topic, bad filters, replies without a topic, qos elsewhere, unknown variables", () => {
    const r = plan({
      setup: [{ waitFor: { match: { path: "$.ready" } } }],
      messages: [
        { event: "devices/+/cmd", text: "a", reply: { event: "devices/dev+/ack" } },
        { event: "$SYS/x", text: "b", reply: { event: "a/#/b" } },
      ],
    });
    const p = problems(r);
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.event: a published topic has no wildcards \(\+ or #\)/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.reply\.event: \+ stands for one whole level/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.1\.event: topics starting with \$ are the broker's own/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.messages\.1\.reply\.event: # stands for every level below/));
    expect(p).toContainEqual(expect.stringMatching(/^flow\.setup\.0\.waitFor\.event: on MQTT a message arrives on a subscription: name the topic/));
    expect(problems(plan({ messages: [{ event: "a/b", qos: 3, text: "c" }] }))).toContainEqual(
      "flow.messages.0.qos: use 0 (at most once), 1 (at least once) or 2 (exactly once)",
    );
    const r2 = plan({ messages: [{ event: "devices/{{ conn.id }}/cmd", text: "c", reply: {} }] });
    expect(problems(r2)).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.event: .*conn\.id/));
    expect(problems(r2)).toContainEqual(expect.stringMatching(/^flow\.messages\.0\.reply\.event: on MQTT a message arrives on a subscription/));
    const ws = plan({ messages: [{ text: "x", qos: 1 }] }, echo, { url: "ws://127.0.0.1:8080/", protocol: "ws" });
    expect(problems(ws)).toContainEqual("flow.messages.0.qos: qos is MQTT's (this target is ws): remove it");
  });

  it("accepts users over mqtt: connect, publish with a reply, capture, wait on a topic", () => {
    const r = users([
      { connect: {} },
      {
        send: {
          event: "shop/orders",
          json: { item: "tea", ref: "{{ msg.id }}" },
          reply: { event: "shop/receipts/+", match: { path: "$.ref", equals: "{{ msg.id }}" } },
          capture: { orderId: "$.orderId" },
        },
      },
      { send: { event: "shop/orders/{{ vars.orderId }}/pay", qos: 1, json: { orderId: "{{ vars.orderId }}" } } },
      { waitFor: { event: "shop/paid/{{ vars.orderId }}", timeout: "5s" } },
    ]);
    expect(problems(r)).toEqual([]);
  });

  it("checks a user's steps where they use an MQTT connection, not those on another protocol", () => {
    const r = users([
      { connect: {} },
      { connect: { connection: "feed", protocol: "sse", url: "http://127.0.0.1:8080/events" } },
      { waitFor: { connection: "feed", timeout: "5s" } },
      { loop: { count: 2, steps: [{ waitFor: { timeout: "5s" } }] } },
    ]);
    expect(problems(r).filter((p) => p.includes("on MQTT"))).toEqual([
      expect.stringMatching(/^flow\.steps\.3\.loop\.steps\.0\.waitFor\.event: on MQTT a message arrives on a subscription/),
    ]);
  });

  it("is in the plan's JSON schema: qos on a message, so the editor completes it", () => {
    const schema = JSON.stringify(planJsonSchema());
    expect(schema).toContain("MQTT: this message's quality of service");
  });
});
