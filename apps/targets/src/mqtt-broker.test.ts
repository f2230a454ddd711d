import mqtt, { type MqttClient } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import type { TestApp } from "./apps/app-http";
import { type MqttBrokerStats, MQTT_PATH, startMqttBroker } from "./mqtt-broker";

const brokers: TestApp<MqttBrokerStats>[] = [];
const clients: MqttClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.endAsync(true);
  for (const b of brokers.splice(0)) await b.close();
});

async function client(url: string, topic: string): Promise<{ c: MqttClient; got: string[] }> {
  const c = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  clients.push(c);
  const got: string[] = [];
  c.on("message", (_t, payload) => got.push(payload.toString()));
  await c.subscribeAsync(topic, { qos: 1 });
  return { c, got };
}

describe("mqtt broker (aedes over WebSocket)", () => {
  it("fans a room topic's messages out to every subscriber, the sender too, and counts it", async () => {
    const broker = await startMqttBroker();
    brokers.push(broker);
    expect(broker.url).toBe(`ws://127.0.0.1:${broker.port}${MQTT_PATH}`);
    const members = await Promise.all([0, 1, 2].map(() => client(broker.url, "rooms/lobby")));
    const outsider = await client(broker.url, "rooms/other");
    await members[0]!.c.publishAsync("rooms/lobby", "hello", { qos: 1 });
    await members[1]!.c.publishAsync("rooms/lobby", "again", { qos: 0 });
    await expect.poll(() => members.map((m) => m.got.length), { timeout: 3000 }).toEqual([2, 2, 2]);
    expect(members[2]!.got).toEqual(["hello", "again"]);
    expect(outsider.got).toEqual([]);
    const stats = (await (await fetch(`${broker.httpUrl}/stats`)).json()) as MqttBrokerStats;
    expect(stats).toEqual({ connections: 4, connected: 4, subscriptions: 4, published: 2, forwarded: 6, forwardedBeforeSuback: 0 });
    expect(broker.stats()).toEqual(stats);
  });

  it("answers anything but a WebSocket at /mqtt or GET /stats with a 404 naming both, and closes with clients connected", async () => {
    const broker = await startMqttBroker();
    const res = await fetch(`${broker.httpUrl}/`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toContain("/mqtt");
    const c = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    const closed = new Promise<void>((resolve) => c.once("close", () => resolve()));
    await broker.close();
    await closed;
    await c.endAsync(true);
  });
});
