import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startGraphqlWsFeed, startJsonRpcWs, type GraphqlWsFeedStats, type JsonRpcStats, type TestApp } from "@volley/targets";
import { runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";

const apps: TestApp<JsonRpcStats | GraphqlWsFeedStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

const POSTS = "subscription { posts { id text clientMsgId } }";
const POST = "mutation ($text: String!, $clientMsgId: String) { post(text: $text, clientMsgId: $clientMsgId) { id clientMsgId } }";

describe("flows over raw WebSocket text frames of JSON", { timeout: 30_000 }, () => {
  it("JSON-RPC 2.0: each response is matched by the request's id; the server's counts are Volley's", async () => {
    const app = await startJsonRpcWs();
    apps.push(app);
    const { frames, outcome } = await run({
      name: "json-rpc",
      target: { url: app.url, protocol: "ws", connectTimeout: "5s" },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", duration: "2s", message: { rate: 5, timeout: "5s" } },
      flow: {
        messages: [
          {
            json: { jsonrpc: "2.0", id: "{{ msg.id }}", method: "echo", params: { seq: "{{ msg.seq }}", conn: "{{ conn.index }}" } },
            reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats() as JsonRpcStats;
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    // Every frame reached the server as a well-formed call (a text frame of JSON), none failed.
    expect(stats.requests).toBe(sent);
    expect(stats.responses).toBe(sent);
    expect(stats.errors).toBe(0);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
    expect(total(frames, "events.message")).toBe(sent);
    const latency = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
    expect(latency.totalCount).toBe(sent);
  });

  it("graphql-ws broadcast: every subscriber's push of a post is a delivery matched by its clientMsgId", async () => {
    const app = await startGraphqlWsFeed();
    apps.push(app);
    const n = 4;
    const { frames, outcome } = await run({
      name: "graphql feed",
      target: { url: app.url, protocol: "ws", connectTimeout: "5s", ws: { subprotocols: ["graphql-transport-ws"] } },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "broadcast", room: "feed", echo: true, duration: "2s", message: { rate: 2, timeout: "5s" } },
      flow: {
        setup: [
          { send: { name: "init", json: { type: "connection_init" } } },
          { waitFor: { name: "ack", match: { path: "$.type", equals: "connection_ack" } } },
          { send: { name: "subscribe", json: { id: "feed", type: "subscribe", payload: { query: POSTS } } } },
          // graphql-transport-ws never confirms a subscription: the connection's own post coming back
          // through it proves the server has it, so every later post is a delivery the server owes it.
          {
            send: {
              name: "ready",
              json: { id: "ready", type: "subscribe", payload: { query: POST, variables: { text: "ready", clientMsgId: "ready-{{ conn.index }}" } } },
            },
          },
          { waitFor: { name: "subscribed", match: { path: "$.payload.data.posts.clientMsgId", equals: "ready-{{ conn.index }}" } } },
        ],
        messages: [
          {
            // Each post is its own operation (id = msg.id); its reply is the subscription's push of it.
            json: { id: "{{ msg.id }}", type: "subscribe", payload: { query: POST, variables: { text: "post #{{ msg.seq }}", clientMsgId: "{{ msg.id }}" } } },
            reply: { match: { path: "$.payload.data.posts.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats() as GraphqlWsFeedStats;
    const sent = total(frames, COUNTERS.sent);
    const received = total(frames, COUNTERS.received);
    const deliveries = total(frames, COUNTERS.deliveriesReceived);
    expect(sent).toBeGreaterThanOrEqual(n * 3);
    expect(stats.subscriptions).toBe(n);
    expect(stats.mutations).toBe(sent + n);
    expect(received).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
    expect(total(frames, COUNTERS.deliveriesExpected)).toBe(deliveries);
    // Each post went to every subscriber: n - 1 deliveries besides the sender's own copy.
    expect(deliveries).toBeGreaterThan(0);
    // Everything the server pushed or answered, Volley counted: the pushes but each connection's own
    // "ready" push (consumed by its setup), and per mutation its `next` result and `complete`.
    expect(total(frames, "events.message")).toBe(stats.pushes - n + 2 * stats.mutations);
    // Unmatched: the mutations' results and completes, and the other connections' ready posts.
    const readyPushes = stats.pushes - received - deliveries;
    expect(readyPushes).toBeGreaterThanOrEqual(n);
    expect(readyPushes).toBeLessThanOrEqual(n * n);
    expect(total(frames, COUNTERS.unmatched)).toBe(2 * stats.mutations + readyPushes - n);
    expect(total(frames, "errors.protocol")).toBe(0);
  });
});
