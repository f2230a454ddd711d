import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { histogramCount, runFlow as run } from "../flow/flow-test-kit";
import { total } from "../engine/engine-test-kit";
import { mosquittoInstalled, startMosquitto } from "../drivers/mosquitto-broker";
import { startDeviceService } from "../flow/mqtt-device-service";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const own = (level: string) => `devices/{{ conn.index }}/${level}`;

/** Connect, order, confirm the order by the id the service made, wait for its shipped event. */
const ORDER_CONFIRM_SHIPPED = [
  { connect: {} },
  {
    send: {
      name: "order",
      event: own("cmd"),
      qos: 1,
      json: { cmd: "order", item: "{{ random.pick(valve, pump, fan) }}", ref: "{{ msg.id }}" },
      reply: { event: own("ack"), match: { path: "$.ref", equals: "{{ msg.id }}" } },
      capture: { orderId: "$.orderId" },
    },
  },
  {
    send: {
      name: "confirm",
      event: own("cmd"),
      json: { cmd: "confirm", orderId: "{{ vars.orderId }}", ref: "{{ msg.id }}" },
      reply: { event: own("ack"), match: { path: "$.confirmed", equals: "{{ vars.orderId }}" } },
    },
  },
  { waitFor: { name: "shipped", event: own("events"), match: { path: "$.orderId", equals: "{{ vars.orderId }}" }, capture: { shipped: "$.event" } } },
  { disconnect: true },
] as const;

describe.skipIf(!mosquittoInstalled)("users over MQTT against a device service on mosquitto", { timeout: 60_000 }, () => {
  it("each user orders, confirms by the id from the service's reply and waits for its shipped event: the service's counts are Volley's", async () => {
    const broker = await startMosquitto();
    closers.push(() => broker.close());
    const app = await startDeviceService(broker.url);
    closers.push(() => app.close());
    const { frames, outcome } = await run({
      name: "mqtt users",
      target: { url: broker.url, protocol: "mqtt", connectTimeout: "5s" },
      connections: { count: 50 },
      scenario: { kind: "users", arrivalRate: 10, duration: "2s", maxUserTime: "20s" },
      flow: { steps: [...ORDER_CONFIRM_SHIPPED] },
    });
    expect(outcome.status).toBe("completed");
    const s = app.stats;
    expect(total(frames, COUNTERS.usersStarted)).toBe(20);
    expect(total(frames, COUNTERS.usersCompleted)).toBe(20);
    expect(total(frames, COUNTERS.usersFailed)).toBe(0);
    expect(s.orders).toBe(20);
    expect(s.confirmed).toBe(20);
    expect(s.shipped).toBe(20);
    expect(s.unknownOrders).toBe(0);
    expect(s.malformed).toBe(0);
    expect(s.errors).toEqual({});
    // The order went at QoS 1 (its own), the confirm at target.mqtt.qos (0).
    expect(s.qos).toEqual([20, 20, 0]);
    expect(total(frames, COUNTERS.sent)).toBe(40);
    expect(total(frames, COUNTERS.received)).toBe(40);
    // The broker acknowledged each QoS 1 order (PUBACK), counted as connection scenarios count it.
    expect(total(frames, COUNTERS.mqttAcked)).toBe(20);
    for (const step of ["order", "confirm", "shipped"]) expect(histogramCount(frames, `step.${step}`)).toBe(20);
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(40);
  });

  it("a reply that never comes fails that user's step by name, with the topic and match in words", async () => {
    const broker = await startMosquitto();
    closers.push(() => broker.close());
    const app = await startDeviceService(broker.url);
    closers.push(() => app.close());
    const steps = [
      { connect: {} },
      {
        send: {
          name: "order",
          event: own("cmd"),
          json: { cmd: "order", item: "fan", ref: "{{ msg.id }}" },
          timeout: "300ms",
          // The service answers on ack, never on receipts.
          reply: { event: own("receipts"), match: { path: "$.ref", equals: "{{ msg.id }}" } },
        },
      },
    ];
    const { frames, outcome } = await run({
      name: "mqtt users lost",
      target: { url: broker.url, protocol: "mqtt", connectTimeout: "5s" },
      connections: { count: 10 },
      scenario: { kind: "users", arrivalRate: 5, duration: "1s", maxUserTime: "10s" },
      flow: { steps },
    });
    expect(outcome.status).toBe("completed");
    expect(app.stats.orders).toBe(5);
    expect(total(frames, COUNTERS.usersFailed)).toBe(5);
    expect(total(frames, "errors.step.order")).toBe(5);
    const samples = frames.flatMap((f) => f.samples ?? []).filter((e) => e.event === "step.order");
    expect(samples[0]?.data).toMatch(/devices\/\{\{ conn\.index \}\}\/receipts with \$\.ref = \{\{ msg\.id \}\} within 300 ms/);
  });
});
