import mqtt from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, validatePlan } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";
import { freePort } from "../drivers/driver-test-kit";
import { mosquittoInstalled, startMosquitto } from "../drivers/mosquitto-broker";
import { startDeviceService } from "./mqtt-device-service";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function deviceBroker(delayMs?: number) {
  const broker = await startMosquitto();
  closers.push(() => broker.close());
  const app = await startDeviceService(broker.url, { delayMs });
  closers.push(() => app.close());
  return { broker, app };
}

const ack = "devices/{{ conn.index }}/ack";

describe.skipIf(!mosquittoInstalled)("flows over MQTT against a device service on mosquitto", { timeout: 30_000 }, () => {
  it("JSON, text, MessagePack and raw bytes, each on its own topic at its own QoS: the service's counts are Volley's", async () => {
    const { broker, app } = await deviceBroker();
    const n = 4;
    const { frames, outcome } = await run({
      name: "mqtt devices",
      target: { url: broker.url, protocol: "mqtt", connectTimeout: "5s", mqtt: { qos: 1 } },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "echo", duration: "2s", message: { rate: 8, timeout: "5s" } },
      flow: {
        messages: [
          {
            name: "ping",
            event: "devices/{{ conn.index }}/cmd",
            qos: 1,
            json: { cmd: "ping", ref: "{{ msg.id }}" },
            reply: { event: ack, match: { path: "$.ref", equals: "{{ msg.id }}" } },
          },
          // Text answered in order: the device's next reply on its own topic.
          { name: "say", event: "devices/{{ conn.index }}/say", qos: 0, text: "hello #{{ msg.seq }}", reply: { event: "devices/{{ conn.index }}/said" } },
          {
            name: "bin",
            event: "devices/{{ conn.index }}/bin",
            qos: 2,
            codec: "msgpack",
            json: { ref: "{{ msg.id }}" },
            reply: { event: "devices/{{ conn.index }}/bin-ack", match: { path: "$.ref", equals: "{{ msg.id }}" } },
          },
          { name: "raw", event: "devices/{{ conn.index }}/raw", binary: { hex: "c0ffee" }, reply: false },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const s = app.stats;
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(n * 12);
    const got = (k: string) => s.received[k] ?? 0;
    // Every publish reached the service, at the QoS its message asked for.
    await expect.poll(() => got("cmd") + got("say") + got("bin") + got("raw")).toBe(sent);
    // raw names no QoS: target.mqtt.qos (1).
    expect(s.qos).toEqual([got("say"), got("cmd") + got("raw"), got("bin")]);
    expect(got("cmd") * got("say") * got("bin") * got("raw")).toBeGreaterThan(0);
    expect(s.malformed).toBe(0);
    expect(s.errors).toEqual({});
    expect([...s.devices].sort()).toEqual(["0", "1", "2", "3"]);
    // Every reply the service published came back to its device and was matched; nothing else arrived.
    expect(total(frames, COUNTERS.received)).toBe(sent - got("raw"));
    expect(total(frames, `events.${ack}`)).toBe(s.replied.ack);
    expect(total(frames, "events.devices/{{ conn.index }}/said")).toBe(s.replied.said);
    expect(total(frames, "events.devices/{{ conn.index }}/bin-ack")).toBe(s.replied["bin-ack"]);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    // Each QoS 1 and 2 publish was acknowledged by the broker (PUBACK, PUBCOMP).
    expect(total(frames, COUNTERS.mqttAcked)).toBe(got("cmd") + got("bin") + got("raw"));
    expect(total(frames, "errors.protocol")).toBe(0);
    const latency = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
    expect(latency.totalCount).toBe(sent - got("raw"));
  });

  it("a slow service: every reply is timed from the message's intended send, the service's delay included", async () => {
    const delayMs = 150;
    const { broker, app } = await deviceBroker(delayMs);
    const { frames, outcome } = await run({
      name: "mqtt slow",
      target: { url: broker.url, protocol: "mqtt", connectTimeout: "5s" },
      connections: { count: 2, rate: 1000 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 10, timeout: "5s" } },
      flow: {
        messages: [
          {
            event: "devices/{{ conn.index }}/cmd",
            json: { cmd: "ping", ref: "{{ msg.id }}" },
            reply: { event: ack, match: { path: "$.ref", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    expect(app.stats.replied.ack).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    const latency = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
    expect(latency.totalCount).toBe(sent);
    expect(latency.minNonZeroValue).toBeGreaterThanOrEqual(delayMs * 1000);
  });

  it("a reply topic with a wildcard: the service's acks of every device match, reported under the plan's filter", async () => {
    const { broker, app } = await deviceBroker();
    const { frames, outcome } = await run({
      name: "mqtt wildcard",
      target: { url: broker.url, protocol: "mqtt", connectTimeout: "5s" },
      connections: { count: 3, rate: 1000 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 5, timeout: "5s" } },
      flow: {
        messages: [
          {
            event: "devices/{{ conn.index }}/cmd",
            json: { cmd: "ping", ref: "{{ msg.id }}" },
            // Each connection hears every device's acks: matched by id, the others' are unmatched, never a reply.
            reply: { event: "devices/+/ack", match: { path: "$.ref", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    expect(app.stats.replied.ack).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, "events.devices/+/ack")).toBe(sent * 3);
    expect(total(frames, COUNTERS.lost)).toBe(0);
  });
});

/** Plain mqtt.js beside the run: messages on `filter` seen from outside Volley, and the broker's own count of PUBLISHes it received ($SYS). */
async function observe(url: string, filter: string): Promise<{ seen: () => number; brokerReceived: () => number }> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  closers.push(() => client.endAsync(true));
  let seen = 0;
  let brokerReceived = -1;
  client.on("message", (topic, payload) => {
    if (topic.startsWith("$SYS/")) brokerReceived = Number(payload.toString());
    else seen++;
  });
  await client.subscribeAsync([filter, "$SYS/broker/publish/messages/received"], { qos: 2 });
  return { seen: () => seen, brokerReceived: () => brokerReceived };
}

describe.skipIf(!mosquittoInstalled)("flows over MQTT: broadcast", { timeout: 30_000 }, () => {
  it("a room's topic from the scenario's room: every member's copy matched by the message's id, counts the broker's own", async () => {
    const broker = await startMosquitto();
    closers.push(() => broker.close());
    const room = "chat/{{ conn.room }}";
    const outside = await observe(broker.url, "chat/#");
    const n = 4;
    const { frames, outcome } = await run({
      name: "mqtt flow broadcast",
      target: { url: broker.url, protocol: "mqtt", connectTimeout: "5s" },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "broadcast", room: "lobby", echo: true, duration: "1s", message: { rate: 5, timeout: "3s" } },
      flow: {
        messages: [
          {
            event: room,
            qos: 1,
            json: { text: "hi #{{ msg.seq }}", from: "{{ conn.index }}", clientMsgId: "{{ msg.id }}" },
            reply: { event: room, match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(n * 4);
    // Each publish reached the broker once (its own $SYS count; only Volley publishes here) and was routed once to an outside subscriber.
    await expect.poll(outside.seen, { timeout: 3000 }).toBe(sent);
    await expect.poll(outside.brokerReceived, { timeout: 5000 }).toBe(sent);
    // The sender's own copy is its reply; every other member's a delivery.
    expect(total(frames, COUNTERS.received)).toBe(sent);
    const deliveries = total(frames, COUNTERS.deliveriesReceived);
    expect(deliveries).toBe(total(frames, COUNTERS.deliveriesExpected));
    expect(deliveries).toBeGreaterThan(sent * (n - 1) * 0.9);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
    expect(total(frames, `events.${room}`)).toBe(sent + deliveries);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
  });
});

const pingFlow = {
  messages: [
    {
      event: "devices/{{ conn.index }}/cmd",
      json: { cmd: "ping", ref: "{{ msg.id }}" },
      reply: { event: ack, match: { path: "$.ref", equals: "{{ msg.id }}" } },
    },
  ],
};

describe.skipIf(!mosquittoInstalled)("flows over MQTT: bad input", { timeout: 30_000 }, () => {
  it("a refused CONNACK (a wrong password in mosquitto's password file) fails every connection with the broker's reason code, never a crash", async () => {
    const { broker } = await deviceBroker();
    const { frames, outcome } = await run({
      name: "mqtt flow refused",
      target: { url: broker.authUrl, protocol: "mqtt", connectTimeout: "5s", mqtt: { username: broker.user, password: "wrong" } },
      connections: { count: 3, rate: 1000 },
      scenario: { kind: "echo", duration: "300ms", message: { rate: 5, timeout: "1s" } },
      flow: pingFlow,
      sanity: false,
    });
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toContain("Connection refused: Not authorized (CONNACK reason code 5)");
    expect(total(frames, COUNTERS.connectionsFailed)).toBe(3);
    expect(total(frames, "errors.handshake")).toBe(3);
    expect(total(frames, COUNTERS.sent)).toBe(0);
  });

  it("the right password on the same listener: the flow runs", async () => {
    const { broker, app } = await deviceBroker();
    const { frames, outcome } = await run({
      name: "mqtt flow auth",
      target: { url: broker.authUrl, protocol: "mqtt", connectTimeout: "5s", mqtt: { username: broker.user, password: broker.password } },
      connections: { count: 2, rate: 1000 },
      scenario: { kind: "echo", duration: "500ms", message: { rate: 4, timeout: "3s" } },
      flow: pingFlow,
    });
    expect(outcome.status).toBe("completed");
    expect(total(frames, COUNTERS.received)).toBe(app.stats.replied.ack);
    expect(total(frames, COUNTERS.received)).toBe(total(frames, COUNTERS.sent));
  });

  it("MQTT 5: a publish the broker's ACL refuses is counted by class with the PUBACK's reason, the connection and the rest of the flow go on", async () => {
    // The flow's user may publish commands and read acks, nothing else.
    const acl = "user volley\ntopic write devices/+/cmd\ntopic read devices/+/ack";
    const broker = await startMosquitto([], { acl });
    closers.push(() => broker.close());
    const { frames, outcome } = await run({
      name: "mqtt flow acl",
      target: { url: broker.authUrl, protocol: "mqtt", connectTimeout: "5s", mqtt: { username: broker.user, password: broker.password, version: "5" } },
      connections: { count: 2, rate: 1000 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 6, timeout: "2s" } },
      flow: {
        messages: [
          { name: "allowed", event: "devices/{{ conn.index }}/cmd", qos: 1, text: "ok", reply: false },
          { name: "forbidden", event: "devices/{{ conn.index }}/firmware", qos: 1, text: "flash", reply: false },
        ],
      },
      sanity: false,
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    const refused = total(frames, "errors.protocol");
    expect(refused).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.mqttAcked) + refused).toBe(sent);
    expect(total(frames, COUNTERS.mqttAcked)).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
    const samples = frames.flatMap((f) => f.samples ?? []).map((x) => String(x.data));
    expect(samples.join("\n")).toMatch(/Not authorized/i);
  });

  it("a topic a data row renders with a wildcard is not published, counted by class with the topic; the connection and the others go on", async () => {
    const { broker, app } = await deviceBroker();
    const { frames, outcome } = await run({
      name: "mqtt flow bad topic",
      target: { url: broker.url, protocol: "mqtt", connectTimeout: "5s" },
      connections: { count: 2, rate: 1000 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 5, timeout: "1s" } },
      flow: {
        data: { rows: [{ device: "pump-1" }, { device: "pump/+" }] },
        messages: [{ event: "devices/{{ data.device }}/raw", binary: { hex: "01" }, reply: false }],
      },
      sanity: false,
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    await expect.poll(() => app.stats.received.raw ?? 0).toBeGreaterThan(0);
    expect(total(frames, "errors.protocol")).toBe(sent - app.stats.received.raw!);
    expect(total(frames, "errors.protocol")).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
    const samples = frames.flatMap((f) => f.samples ?? []).map((x) => String(x.data));
    expect(samples.join("\n")).toContain('the topic "devices/pump/+/raw" is empty or has a wildcard');
  });

  it("an unreachable broker: every connection fails as refused, never a crash", async () => {
    const { frames, outcome } = await run({
      name: "mqtt flow unreachable",
      target: { url: `ws://127.0.0.1:${await freePort()}/mqtt`, protocol: "mqtt", connectTimeout: "2s" },
      connections: { count: 2, rate: 1000 },
      scenario: { kind: "echo", duration: "200ms", message: { rate: 5, timeout: "1s" } },
      flow: pingFlow,
      sanity: false,
    });
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toContain("connect refused");
    expect(total(frames, "errors.refused")).toBe(2);
  });

  it("a topic template with an unknown variable is refused before the run, naming the field and what is known", () => {
    const r = validatePlan({
      name: "t",
      target: { url: "ws://127.0.0.1:1/mqtt", protocol: "mqtt" },
      connections: { count: 1 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 1 } },
      flow: { messages: [{ ...pingFlow.messages[0], event: "devices/{{ conn.id }}/cmd" }] },
    });
    expect(r.ok).toBe(false);
    const issues = r.ok ? [] : r.issues.map((i) => `${i.path}: ${i.message}`);
    expect(issues).toEqual([expect.stringMatching(/^flow\.messages\.0\.event: .*\{\{ conn\.id \}\}.*conn\.index/)]);
  });
});
