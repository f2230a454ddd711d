import { randomUUID } from "node:crypto";
import { Client, type IMessage } from "@stomp/stompjs";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";
import { reachable } from "../drivers/driver-test-kit";

/** RabbitMQ's Web-STOMP plugin (text frames), as on this machine and CI. */
const BROKER = process.env.VOLLEY_TEST_WEB_STOMP_URL ?? "ws://127.0.0.1:15674/ws";
const LOGIN = { login: "guest", passcode: "guest", host: "/" };

const up = await reachable(BROKER);
if (!up) console.warn(`flow-stomp: skipped — RabbitMQ Web-STOMP not reachable at ${BROKER} (enable it: rabbitmq-plugins enable rabbitmq_web_stomp)`);

/** A plain @stomp/stompjs subscriber beside the run: what the broker delivered, seen from outside Volley. */
async function observe(destination: string): Promise<{ count: () => number; close: () => Promise<void> }> {
  let n = 0;
  const client = new Client({
    webSocketFactory: () => new WebSocket(BROKER, ["v12.stomp"]),
    connectHeaders: LOGIN,
    reconnectDelay: 0,
    debug: () => {},
  });
  await new Promise<void>((resolve, reject) => {
    client.onConnect = () => {
      client.watchForReceipt("observer", () => resolve());
      client.subscribe(destination, (m: IMessage) => void (JSON.parse(m.body) && n++), { receipt: "observer" });
    };
    client.onStompError = (f) => reject(new Error(f.headers.message));
    client.activate();
  });
  return { count: () => n, close: () => client.deactivate() };
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe.skipIf(!up)("flows against RabbitMQ Web-STOMP (text frames)", { timeout: 30_000 }, () => {
  it("echo through the broker: each connection sends to its own destination (a template) and hears it there", async () => {
    // amq.direct: SUBSCRIBE makes an exclusive auto-delete queue bound by the key, so nothing outlives the run.
    const queue = `/exchange/amq.direct/volley-flow-${randomUUID().slice(0, 8)}-{{ conn.index }}`;
    const n = 3;
    const { frames, outcome } = await run({
      name: "stomp echo",
      target: { url: BROKER, protocol: "stomp", connectTimeout: "5s", stomp: LOGIN },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "echo", duration: "2s", message: { rate: 4, timeout: "5s" } },
      flow: {
        messages: [
          {
            name: "json",
            event: queue,
            json: { clientMsgId: "{{ msg.id }}", n: "{{ msg.seq }}" },
            reply: { event: queue, match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
          // Text bodies answered in order: the next message on the connection's own destination.
          { name: "text", event: queue, text: "plain #{{ msg.seq }}", reply: { event: queue } },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(n * 6);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    // Counted under the plan's spelling of the destination, one counter for every connection's own.
    expect(total(frames, `events.${queue}`)).toBe(sent);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
  });

  it("broadcast over a topic: JSON text bodies, every subscriber's copy matched by clientMsgId", async () => {
    const topic = `/topic/volley-flow-${randomUUID().slice(0, 8)}`;
    const observer = await observe(topic);
    closers.push(observer.close);
    const n = 4;
    const { frames, outcome } = await run({
      name: "stomp topic",
      target: { url: BROKER, protocol: "stomp", connectTimeout: "5s", stomp: LOGIN },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "broadcast", room: "chat", echo: true, duration: "2s", message: { rate: 2, timeout: "5s" } },
      flow: {
        messages: [
          {
            event: topic,
            json: { text: "hello #{{ msg.seq }}", from: "{{ conn.index }}", clientMsgId: "{{ msg.id }}" },
            headers: { "x-volley-seq": "{{ msg.seq }}" },
            reply: { event: topic, match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    const deliveries = total(frames, COUNTERS.deliveriesReceived);
    expect(sent).toBeGreaterThanOrEqual(n * 3);
    // The broker routed every SEND to the topic: the outside subscriber saw each one once.
    await expect.poll(() => observer.count()).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(deliveries).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.deliveriesExpected)).toBe(deliveries);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(total(frames, `events.${topic}`)).toBe(sent + deliveries);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
    const latency = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
    expect(latency.totalCount).toBe(sent);
  });
});
