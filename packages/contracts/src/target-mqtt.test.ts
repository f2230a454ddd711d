import { describe, expect, it } from "vitest";
import { validatePlan } from "./plan-document";
import { planJsonSchema } from "./plan-json-schema";

function withTarget(target: Record<string, unknown>, scenario: Record<string, unknown> = { kind: "echo", message: { rate: 1 }, duration: "1s" }) {
  return validatePlan({ name: "t", target, connections: { count: 1 }, scenario });
}

const problems = (r: ReturnType<typeof withTarget>): string[] => (r.ok ? [] : r.issues.map((p) => `${p.path}: ${p.message}`));

describe("target.mqtt", () => {
  it("accepts protocol mqtt on ws:// and wss:// and fills the defaults", () => {
    const r = withTarget({ url: "ws://127.0.0.1:8080/mqtt", protocol: "mqtt", mqtt: {} });
    expect(r.ok && r.plan.target.mqtt).toEqual({
      version: "3.1.1",
      qos: 0,
      clientId: "volley-{{ random.hex }}",
      clean: true,
      roomTopic: "volley/rooms/{{ conn.room }}",
      retain: false,
    });
    const full = withTarget({
      url: "wss://broker.example.com/mqtt",
      protocol: "mqtt",
      mqtt: {
        version: "5",
        qos: 2,
        clientId: "load-{{ random.uuid }}",
        username: "u",
        password: "p",
        clean: false,
        topic: "echo/{{ random.hex }}",
        roomTopic: "room/{{ conn.room }}",
        retain: true,
      },
    });
    expect(full.ok).toBe(true);
    expect(withTarget({ url: "ws://127.0.0.1:8080/mqtt", protocol: "mqtt" }).ok).toBe(true);
  });

  it("refuses nonsense naming the field and the fix", () => {
    const p = problems(
      withTarget({
        url: "ws://127.0.0.1:8080/mqtt",
        protocol: "mqtt",
        mqtt: { version: 4, qos: 3, clientId: "c-{{ msg.id }}", topic: "sensors/+/temp", roomTopic: "room/lobby" },
      }),
    );
    expect(p).toContainEqual('target.mqtt.version: use "3.1.1" or "5" (the MQTT version, as text)');
    expect(p).toContainEqual("target.mqtt.qos: use 0 (at most once), 1 (at least once) or 2 (exactly once)");
    expect(p).toContainEqual(expect.stringMatching(/^target\.mqtt\.clientId: \{\{ msg\.id \}\} is not known when an MQTT connection is made/));
    expect(p).toContainEqual(expect.stringMatching(/^target\.mqtt\.topic: a published topic has no wildcards/));
    expect(p).toContainEqual("target.mqtt.roomTopic: must contain {{ conn.room }}, like room/{{ conn.room }}");
    expect(problems(withTarget({ url: "ws://h/mqtt", protocol: "mqtt", mqtt: { topic: "$SYS/x", extra: 1 } }))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^target\.mqtt\.topic: topics starting with \$ are the broker's own/),
        expect.stringMatching(/^target\.mqtt: .*extra/),
      ]),
    );
    expect(problems(withTarget({ url: "http://127.0.0.1:8080/mqtt", protocol: "mqtt" }))).toContainEqual(
      "target.url: use a URL starting with ws:// or wss:// for protocol mqtt, like ws://127.0.0.1:8080/mqtt",
    );
    expect(problems(withTarget({ url: "ws://h/stomp", protocol: "stomp", mqtt: {} }))).toContainEqual(
      "target.mqtt: only valid with protocol: mqtt (this target's protocol is stomp); remove it or set protocol: mqtt",
    );
  });

  it("is in the plan's JSON schema, so the editor completes it", () => {
    const text = JSON.stringify(planJsonSchema());
    expect(text).toContain('"mqtt"');
    for (const key of ["version", "qos", "clientId", "username", "password", "clean", "topic", "roomTopic", "retain"]) expect(text).toContain(`"${key}"`);
    expect(text).toContain("volley/rooms/{{ conn.room }}");
  });
});
