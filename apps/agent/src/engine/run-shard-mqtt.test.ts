import mqtt from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { freePort } from "../drivers/driver-test-kit";
import { type MosquittoBroker, mosquittoInstalled, startMosquitto } from "../drivers/mosquitto-broker";
import { runShard } from "./run-shard";
import { total } from "./engine-test-kit";
import type { EngineFrame } from "./types";

const brokers: MosquittoBroker[] = [];
const watchers: mqtt.MqttClient[] = [];
afterEach(async () => {
  for (const w of watchers.splice(0)) await w.endAsync(true);
  for (const b of brokers.splice(0)) await b.close();
});

async function broker(): Promise<MosquittoBroker> {
  const b = await startMosquitto();
  brokers.push(b);
  return b;
}

/** An independent subscriber: counts what the broker routed on `filter`, whoever published it. */
async function watch(url: string, filter: string): Promise<{ count: () => number }> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  watchers.push(client);
  let n = 0;
  client.on("message", () => n++);
  await client.subscribeAsync(filter, { qos: 2 });
  return { count: () => n };
}

/** The broker's own count of PUBLISH packets it received from clients ($SYS, published every second). */
async function brokerPublishesReceived(url: string): Promise<() => number> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  watchers.push(client);
  let n = -1;
  client.on("message", (_t, payload) => (n = Number(payload.toString())));
  await client.subscribeAsync("$SYS/broker/publish/messages/received");
  return () => n;
}

async function run(plan: PlanInput): Promise<{ frames: EngineFrame[]; outcome: Awaited<ReturnType<typeof runShard>> }> {
  const frames: EngineFrame[] = [];
  const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
  return { frames, outcome };
}

describe.skipIf(!mosquittoInstalled)("runs over MQTT against mosquitto", { timeout: 30_000 }, () => {
  for (const [version, qos] of [
    ["3.1.1", 0],
    ["5", 1],
    ["3.1.1", 2],
  ] as const) {
    it(`echo (MQTT ${version}, QoS ${qos}): every message back, counts the broker and an independent subscriber agree with`, async () => {
      const b = await broker();
      const seen = await watch(b.url, "volley/#");
      const published = await brokerPublishesReceived(b.url);
      const { frames, outcome } = await run({
        name: `mqtt echo ${version} qos ${qos}`,
        target: { url: b.url, protocol: "mqtt", connectTimeout: "5s", mqtt: { version, qos } },
        connections: { count: 5, rate: 1000 },
        scenario: { kind: "echo", duration: "1s", message: { rate: 20, timeout: "3s" } },
      });
      expect(outcome.status).toBe("completed");
      const sent = outcome.totals.sent;
      expect(sent).toBeGreaterThanOrEqual(5 * 20);
      expect(total(frames, COUNTERS.sent)).toBe(sent);
      expect(total(frames, COUNTERS.received)).toBe(sent);
      expect(total(frames, COUNTERS.lost)).toBe(0);
      expect(total(frames, COUNTERS.duplicated)).toBe(0);
      expect(total(frames, COUNTERS.connectionsOpened)).toBe(5);
      expect(mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? [])).totalCount).toBe(sent);
      // QoS 1 and 2: every publish acknowledged by the broker (PUBACK, PUBCOMP); QoS 0 has no acknowledgement.
      expect(total(frames, COUNTERS.mqttAcked)).toBe(qos === 0 ? 0 : sent);
      await expect.poll(seen.count, { timeout: 3000 }).toBe(sent);
      // mosquitto 2.0 counts QoS 0 and 1 PUBLISHes in $SYS/broker/publish/messages/received, not QoS 2 ones.
      if (qos < 2) await expect.poll(published, { timeout: 5000 }).toBe(sent);
    });
  }

  it("broadcast: the broker fans every message out to the room's other members, counted exactly", async () => {
    const b = await broker();
    const seen = await watch(b.url, "chat/#");
    const { frames, outcome } = await run({
      name: "mqtt broadcast",
      target: { url: b.url, protocol: "mqtt", connectTimeout: "5s", mqtt: { qos: 1, roomTopic: "chat/{{ conn.room }}" } },
      connections: { count: 4, rate: 1000 },
      scenario: { kind: "broadcast", room: "lobby", duration: "1s", message: { rate: 10, timeout: "3s" } },
    });
    expect(outcome.status).toBe("completed");
    const sent = outcome.totals.sent;
    expect(sent).toBeGreaterThanOrEqual(4 * 10);
    // Expected counts the members open at each send: a first message may go out before the last member's SUBACK.
    const { expected } = outcome.totals.deliveries!;
    expect(expected).toBeLessThanOrEqual(sent * 3);
    expect(expected).toBeGreaterThan(sent * 3 * 0.9);
    expect(outcome.totals.deliveries).toEqual({ expected, received: expected, lost: 0, remote: 0 });
    // The broker hands the sender its own copy: broadcast's echo, a round trip.
    expect(outcome.totals.received).toBe(sent);
    expect(total(frames, COUNTERS.deliveriesDuplicated)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
    await expect.poll(seen.count, { timeout: 3000 }).toBe(sent);
  });

  it("groups: each group's topic reaches its own members only", async () => {
    const b = await broker();
    const { frames, outcome } = await run({
      name: "mqtt groups",
      target: { url: b.url, protocol: "mqtt", connectTimeout: "5s", mqtt: { version: "5" } },
      connections: { count: 6, rate: 1000 },
      scenario: { kind: "groups", size: 3, duration: "1s", message: { rate: 10, timeout: "3s" } },
    });
    const sent = outcome.totals.sent;
    expect(sent).toBeGreaterThanOrEqual(6 * 10);
    const { expected } = outcome.totals.deliveries!;
    expect(expected).toBeLessThanOrEqual(sent * 2);
    expect(expected).toBeGreaterThan(sent * 2 * 0.9);
    expect(outcome.totals.deliveries).toEqual({ expected, received: expected, lost: 0, remote: 0 });
    expect(total(frames, COUNTERS.deliveriesDuplicated)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
  });

  it("a refused CONNACK fails every connection with the broker's reason, never a crash", async () => {
    const b = await broker();
    const { frames, outcome } = await run({
      name: "mqtt refused",
      target: { url: b.authUrl, protocol: "mqtt", connectTimeout: "5s", mqtt: { username: b.user, password: "wrong" } },
      connections: { count: 3, rate: 1000 },
      scenario: { kind: "echo", duration: "300ms", message: { rate: 5, timeout: "1s" } },
      sanity: false,
    });
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toContain("Connection refused: Not authorized (CONNACK reason code 5)");
    expect(total(frames, COUNTERS.connectionsFailed)).toBe(3);
    expect(total(frames, "errors.handshake")).toBe(3);
  });
});

describe("runs over MQTT without a broker", () => {
  it("an unreachable broker: every connection fails as refused", async () => {
    const { frames, outcome } = await run({
      name: "mqtt unreachable",
      target: { url: `ws://127.0.0.1:${await freePort()}/mqtt`, protocol: "mqtt", connectTimeout: "2s" },
      connections: { count: 2, rate: 1000 },
      scenario: { kind: "echo", duration: "200ms", message: { rate: 5, timeout: "1s" } },
      sanity: false,
    });
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toContain("connect refused");
    expect(total(frames, COUNTERS.connectionsFailed)).toBe(2);
    expect(total(frames, "errors.refused")).toBe(2);
  });
});
