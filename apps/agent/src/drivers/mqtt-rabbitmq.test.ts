import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { COUNTERS, mqttOptionsSchema, planSchema, type PlanInput } from "@volley/contracts";
import { total } from "../engine/engine-test-kit";
import { runShard } from "../engine/run-shard";
import type { EngineFrame } from "../engine/types";
import { connectError, reachable } from "./driver-test-kit";
import { mqttDriver } from "./mqtt-driver";

/** RabbitMQ's Web-MQTT plugin (MQTT 3.1.1; QoS 2 is granted as QoS 1). */
const BROKER = process.env.VOLLEY_TEST_WEB_MQTT_URL ?? "ws://127.0.0.1:15675/ws";

const up = await reachable(BROKER);
if (!up) console.warn(`mqtt-rabbitmq: skipped — RabbitMQ Web-MQTT not reachable at ${BROKER} (enable it: rabbitmq-plugins enable rabbitmq_web_mqtt)`);

async function run(plan: PlanInput): Promise<{ frames: EngineFrame[]; outcome: Awaited<ReturnType<typeof runShard>> }> {
  const frames: EngineFrame[] = [];
  const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
  return { frames, outcome };
}

const login = { username: "guest", password: "guest" };

describe.skipIf(!up)("Volley's own messages through RabbitMQ Web-MQTT", { timeout: 30_000 }, () => {
  it("echo at QoS 1: every message back through the connection's own topic, every publish acknowledged", async () => {
    const { frames, outcome } = await run({
      name: "rabbitmq mqtt echo",
      target: { url: BROKER, protocol: "mqtt", connectTimeout: "5s", mqtt: { ...login, qos: 1 } },
      connections: { count: 3, rate: 1000 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 10, timeout: "3s" } },
    });
    expect(outcome.status).toBe("completed");
    const sent = outcome.totals.sent;
    expect(sent).toBeGreaterThanOrEqual(3 * 10);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.mqttAcked)).toBe(sent);
  });

  it("broadcast: the room's topic fans each message out to every member", async () => {
    const { frames, outcome } = await run({
      name: "rabbitmq mqtt broadcast",
      target: { url: BROKER, protocol: "mqtt", connectTimeout: "5s", mqtt: { ...login, roomTopic: "volley/{{ conn.room }}" } },
      connections: { count: 3, rate: 1000 },
      scenario: { kind: "broadcast", room: `r${randomUUID().slice(0, 8)}`, duration: "1s", message: { rate: 5, timeout: "3s" } },
    });
    const d = outcome.totals.deliveries!;
    expect(d.expected).toBeGreaterThan(0);
    expect(d).toEqual({ expected: d.expected, received: d.expected, lost: 0, remote: 0 });
    expect(total(frames, "errors.protocol")).toBe(0);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
  });

  it("wrong credentials: RabbitMQ closes without a CONNACK, and the failure says where to look, never a crash", async () => {
    const err = await connectError(mqttDriver, { url: BROKER, mqtt: mqttOptionsSchema.parse({ username: "guest", password: "wrong" }) });
    expect(err).toMatchObject({
      errorClass: "closed",
      detail: "closed before CONNACK, without a reason: check mqtt.username and mqtt.password, and the broker's log",
    });
  });
});
