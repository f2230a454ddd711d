import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import {
  startMsgpackWs,
  startProtobufWs,
  startSocketioMsgpack,
  TRADE_PROTO,
  type MsgpackWsStats,
  type ProtobufWsStats,
  type SocketioMsgpackStats,
  type TestApp,
} from "@volley/targets";
import { pack } from "msgpackr";
import { histogramCount, runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";

const apps: TestApp<MsgpackWsStats | ProtobufWsStats | SocketioMsgpackStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

const schedule = { connections: { count: 4, rate: 100 }, scenario: { kind: "echo", duration: "2s", message: { rate: 5, timeout: "5s" } } } as const;
const trade = { protobuf: { proto: TRADE_PROTO, type: "trade.Order", replyType: "trade.Fill" } };

describe("flows with binary bodies over raw WebSocket", { timeout: 30_000 }, () => {
  it("msgpack: every request reaches the server as MessagePack, every reply is matched by its decoded id", async () => {
    const app = await startMsgpackWs();
    apps.push(app);
    // A literal's bytes go out as they are: a MessagePack echo written out in hex.
    const hello = pack({ id: "hello", op: "echo", data: 1 }).toString("hex");
    const { frames, outcome } = await run({
      name: "msgpack",
      target: { url: app.url, protocol: "ws", connectTimeout: "5s" },
      ...schedule,
      flow: {
        codec: "msgpack",
        setup: [
          { send: { name: "hello", binary: { hex: hello } } },
          { waitFor: { name: "welcome", match: { path: "$.id", equals: "hello" }, capture: { first: "$.n" } } },
        ],
        messages: [
          {
            json: { id: "{{ msg.id }}", op: "add", a: "{{ msg.seq }}", b: "{{ conn.index }}" },
            reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats() as MsgpackWsStats;
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    // The server decoded each one (and the four setup echoes): none was text, none malformed.
    expect(stats).toEqual({ requests: sent + 4, replies: sent + 4, malformed: 0, textFrames: 0 });
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(sent);
    expect(histogramCount(frames, "setup.welcome")).toBe(4);
  });

  it("protobuf: Orders encoded from the template, Fills (another type) decoded and matched on order_id", async () => {
    const app = await startProtobufWs();
    apps.push(app);
    const { frames, outcome } = await run({
      name: "protobuf",
      target: { url: app.url, protocol: "ws", connectTimeout: "5s" },
      ...schedule,
      flow: {
        codec: trade,
        messages: [
          {
            json: { id: "{{ msg.id }}", symbol: "ACME", qty: "{{ msg.seq }}", side: "SELL", tags: ["conn-{{ conn.index }}"] },
            reply: { match: { path: "$.order_id", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats() as ProtobufWsStats;
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    expect(stats).toEqual({ orders: sent, fills: sent, malformed: 0, textFrames: 0 });
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(sent);
  });

  it("a message its codec cannot encode at run time is counted as errors.encode with the reason, never sent", async () => {
    const app = await startProtobufWs();
    apps.push(app);
    const { frames, outcome } = await run({
      name: "protobuf bad",
      target: { url: app.url, protocol: "ws", connectTimeout: "5s" },
      connections: { count: 1, rate: 100 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 5, timeout: "2s" } },
      flow: {
        codec: trade,
        setup: [
          { send: { name: "first", json: { id: "first", symbol: "ACME", qty: 1 } } },
          // The Fill's order_id is text: as the repeated `tags` it does not encode.
          { waitFor: { name: "filled", match: { path: "$.order_id", equals: "first" }, capture: { got: "$.order_id" } } },
        ],
        messages: [{ json: { id: "{{ msg.id }}", symbol: "ACME", tags: "{{ vars.got }}" }, reply: { match: { path: "$.order_id", equals: "{{ msg.id }}" } } }],
      },
    });
    expect(outcome.status).toBe("completed");
    const failed = total(frames, "errors.encode");
    expect(failed).toBeGreaterThanOrEqual(3);
    expect(total(frames, COUNTERS.sent)).toBe(0);
    expect(app.stats().orders).toBe(1);
    const samples = frames.flatMap((f) => f.samples ?? []).filter((s) => s.event === "encode");
    expect(samples[0]?.data).toMatch(/^cannot encode the message as trade\.Order: .*tags: array expected/);
  });

  it("Socket.IO: msgpack bodies go out as binary attachments; an acknowledgement's bytes are decoded for capture, replies matched on decoded ids", async () => {
    const app = await startSocketioMsgpack();
    apps.push(app);
    const { frames, outcome } = await run({
      name: "socketio msgpack",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s", socketio: { transports: ["websocket"] } },
      ...schedule,
      flow: {
        codec: "msgpack",
        setup: [{ send: { name: "first", event: "rpc", json: { id: "first-{{ conn.index }}", a: 1, b: 1 }, ack: true, capture: { n: "$.n" } } }],
        messages: [
          {
            event: "rpc",
            json: { id: "{{ msg.id }}", op: "add", a: "{{ msg.seq }}", b: "{{ vars.n }}" },
            reply: { event: "result", match: { path: "$.id", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats() as SocketioMsgpackStats;
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    expect(stats).toEqual({ requests: sent + 4, replies: sent + 4, malformed: 0 });
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(sent);
    expect(histogramCount(frames, "setup.first")).toBe(4);
  });
});
