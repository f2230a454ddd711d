/// <reference path="../drivers/socketcluster-client.d.ts" />
import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startSocketclusterEchoServer, startSocketclusterPingpong, type EchoServer, type SocketclusterPingpongStats, type TestApp } from "@volley/targets";
import { create } from "socketcluster-client";
import { runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe("flows against SocketCluster", { timeout: 30_000 }, () => {
  it("ping answered by pong {count} on another event: every pong matched in order, counts equal the server's", async () => {
    const app: TestApp<SocketclusterPingpongStats> = await startSocketclusterPingpong();
    closers.push(() => app.close());
    const { frames, outcome } = await run({
      name: "pingpong",
      target: { url: app.url, protocol: "socketcluster", connectTimeout: "5s" },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", duration: "2s", message: { rate: 5, timeout: "5s" } },
      flow: { messages: [{ event: "ping", json: { n: "{{ msg.seq }}" }, reply: { event: "pong" } }] },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    expect(stats.connections).toBe(4);
    expect(stats.pings).toBe(sent);
    expect(stats.pongs).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, "events.pong")).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
    const latency = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
    expect(latency.totalCount).toBe(sent);
  });

  it("a reply awaited on the wrong event: the pongs are counted unmatched, per event, with samples of what came", async () => {
    const app: TestApp<SocketclusterPingpongStats> = await startSocketclusterPingpong();
    closers.push(() => app.close());
    const { frames } = await run({
      name: "pingpong wrong event",
      target: { url: app.url, protocol: "socketcluster", connectTimeout: "5s" },
      connections: { count: 2, rate: 100 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 3, timeout: "2s" } },
      sanity: false,
      flow: { messages: [{ event: "ping", json: { n: "{{ msg.seq }}" }, reply: { event: "pong-reply" } }] },
    });
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThan(0);
    expect(app.stats().pongs).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(sent);
    expect(total(frames, "unmatched.pong")).toBe(sent);
    const samples = frames.flatMap((f) => f.samples ?? []);
    expect(samples.length).toBe(Math.min(5, sent));
    expect(samples[0]).toMatchObject({ event: "pong" });
    expect(JSON.parse(samples[0]!.data)).toEqual({ count: expect.any(Number) });
  });

  it("an invoke's response is the acknowledgement: the reply with ack: true", async () => {
    const server: EchoServer = await startSocketclusterEchoServer();
    closers.push(() => server.close());
    const { frames, outcome } = await run({
      name: "invoke",
      target: { url: server.url, protocol: "socketcluster", connectTimeout: "5s" },
      connections: { count: 2, rate: 100 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 5, timeout: "5s" } },
      flow: { messages: [{ event: "echo", json: { n: "{{ msg.seq }}" }, reply: { ack: true } }] },
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
  });

  it("a channel: #subscribe in setup, #publish as the message, every subscriber's copy matched by id", async () => {
    const server: EchoServer = await startSocketclusterEchoServer();
    closers.push(() => server.close());
    // An independent subscriber: what the server published on the channel, seen from outside Volley.
    const url = new URL(server.url);
    const observer = create({ hostname: url.hostname, port: Number(url.port), path: url.pathname, secure: false, autoReconnect: false });
    closers.push(() => observer.disconnect());
    const observerChannel = observer.subscribe("lobby");
    await observerChannel.listener("subscribe").once();
    let observed = 0;
    void (async () => {
      for await (const _ of observerChannel) observed++;
    })();

    const n = 4;
    const { frames, outcome } = await run({
      name: "channel",
      target: { url: server.url, protocol: "socketcluster", connectTimeout: "5s" },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "broadcast", room: "lobby", echo: true, duration: "2s", message: { rate: 2, timeout: "5s" } },
      flow: {
        setup: [{ send: { name: "subscribe", event: "#subscribe", json: { channel: "{{ conn.room }}" }, ack: true } }],
        messages: [
          {
            event: "#publish",
            json: { channel: "{{ conn.room }}", data: { text: "hi #{{ msg.seq }}", clientMsgId: "{{ msg.id }}" } },
            reply: { event: "#publish", match: { path: "$.data.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    const deliveries = total(frames, COUNTERS.deliveriesReceived);
    expect(sent).toBeGreaterThanOrEqual(n * 3);
    await expect.poll(() => observed).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(deliveries).toBeGreaterThan(0);
    expect(total(frames, COUNTERS.deliveriesExpected)).toBe(deliveries);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(total(frames, "events.#publish")).toBe(sent + deliveries);
    const setup = mergeEncoded(frames.flatMap((f) => f.histograms["setup.subscribe"] ?? []));
    expect(setup.totalCount).toBe(n);
  });
});
