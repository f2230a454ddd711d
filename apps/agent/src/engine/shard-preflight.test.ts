import { describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { shardPreflight } from "./shard-preflight";

const plan = (flow: Record<string, unknown>) =>
  planSchema.parse({
    name: "preflight",
    target: { url: "ws://127.0.0.1:9/echo", protocol: "ws" },
    connections: { count: 2, rate: 10 },
    scenario: { kind: "echo", message: { bytes: 64, rate: 2 }, duration: "2s" },
    flow,
  });

describe("shardPreflight", () => {
  it("refuses a connection scenario whose flow has setup steps and nothing to send, naming flow.messages (the engine thread crashed on it)", () => {
    const why = shardPreflight(plan({ setup: [{ send: { json: { type: "hello" } } }] }), { maxConnections: 100 });
    expect(why).toMatch(/^flow\.messages: a echo scenario sends after each connection's setup/);
    expect(why).toMatch(/messages: \[\{ json:/);
  });

  it("takes the same flow once it says what to send", () => {
    const ok = plan({ setup: [{ send: { json: { type: "hello" } } }], messages: [{ json: { type: "ping" }, reply: false }] });
    expect(shardPreflight(ok, { maxConnections: 100 })).toBeUndefined();
  });

  it("refuses a users plan whose connection speaks a protocol this agent has no driver for (a plan from a newer hub), naming the step", () => {
    const users = planSchema.parse({
      name: "users",
      target: { url: "ws://127.0.0.1:9/ws", protocol: "ws" },
      connections: { count: 2 },
      scenario: { kind: "users", arrivalRate: 1, duration: "1s" },
      flow: { steps: [{ connect: {} }, { connect: { connection: "feed", protocol: "sse", url: "/events" } }] },
    });
    expect(shardPreflight(users, { maxConnections: 100 })).toBeUndefined();
    const feed = users.flow!.steps![1] as { connect: { protocol?: string } };
    feed.connect.protocol = "quic";
    expect(shardPreflight(users, { maxConnections: 100 })).toBe('protocol "quic" (flow.steps.2: connection feed) is not supported by this agent');
  });
});
