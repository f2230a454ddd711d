import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, type PlanInput } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startSocketioChat, startSocketioV2EchoServer, type SocketioChatStats, type TestApp } from "@volley/targets";
import { runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";

const apps: TestApp<SocketioChatStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function chat(): Promise<TestApp<SocketioChatStats>> {
  const app = await startSocketioChat();
  apps.push(app);
  return app;
}

/** Logs in over HTTP, connects with the token in the handshake auth, joins by an event with no ack. */
type SetupInput = NonNullable<NonNullable<PlanInput["flow"]>["setup"]>;
const setup = (joinRoom: string): SetupInput => [
  { request: { name: "login", method: "POST", url: "/login", json: { user: "{{ data.user }}" }, capture: { token: "$.token" } } },
  { connect: { auth: { token: "{{ vars.token }}" } } },
  { send: { name: "join", event: "join", json: { room: joinRoom } } },
  { waitFor: { name: "joined", event: "joined", capture: { members: "$.members" } } },
];

describe("flows against a Socket.IO chat written like a real app", { timeout: 30_000 }, () => {
  it("echo: each chat's own copy is its reply, matched by the clientMsgId the plan put in", async () => {
    const app = await chat();
    const { frames, outcome } = await run({
      name: "chat echo",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s", socketio: { transports: ["websocket"] } },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", duration: "2s", message: { rate: 5, timeout: "5s" } },
      flow: {
        data: { rows: [{ user: "ann" }, { user: "bob" }], reuse: true },
        // Every connection its own room, so the only copy of a chat is the sender's.
        setup: setup("room-{{ conn.index }}"),
        messages: [
          {
            event: "chat",
            json: { room: "room-{{ conn.index }}", text: "hello #{{ msg.seq }}", clientMsgId: "{{ msg.id }}" },
            reply: { event: "message", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(4 * 9);
    // The server's own counters: every chat it accepted came back to its sender and was timed.
    expect(stats.chatsReceived).toBe(sent);
    expect(stats.messagesDelivered).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(stats.logins).toBe(4);
    expect(stats.joins).toBe(4);
    // The joined answers were consumed by the setup, not counted as unmatched messages.
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(total(frames, "events.message")).toBe(sent);
    // Setup steps are their own metrics, never in the message latency.
    const login = mergeEncoded(frames.flatMap((f) => f.histograms["setup.login"] ?? []));
    expect(login.totalCount).toBe(4);
    const latency = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
    expect(latency.totalCount).toBe(sent);
  });

  it("broadcast: every member's copy is a delivery matched by id; the server counts the same", async () => {
    const app = await chat();
    const { frames, outcome } = await run({
      name: "chat room",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s", socketio: { transports: ["websocket"] } },
      connections: { count: 5, rate: 1000 },
      scenario: { kind: "broadcast", room: "lobby", echo: true, duration: "2s", message: { rate: 2, timeout: "5s" } },
      flow: {
        data: { csv: "user\nann\nbob\ncid\ndan\neve" },
        setup: setup("{{ conn.room }}"),
        messages: [
          {
            event: "chat",
            json: { room: "{{ conn.room }}", text: "hi", clientMsgId: "{{ msg.id }}" },
            reply: { event: "message", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    expect(stats.chatsReceived).toBe(sent);
    const deliveries = total(frames, COUNTERS.deliveriesReceived);
    const echoes = total(frames, COUNTERS.received);
    // What the server handed out is exactly what Volley counted: own copies plus deliveries.
    expect(echoes + deliveries).toBe(stats.messagesDelivered);
    expect(echoes).toBe(sent);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
    expect(total(frames, COUNTERS.deliveriesExpected)).toBe(deliveries);
  });

  it("a failed login fails the connection by step name, with the server's words", async () => {
    const app = await chat();
    const { outcome, frames } = await run({
      name: "bad login",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s" },
      connections: { count: 2, rate: 100 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 1 } },
      sanity: false,
      flow: {
        setup: [{ request: { name: "login", method: "POST", url: "/login", json: {}, capture: { token: "$.token" } } }],
        messages: [{ event: "chat", json: {}, reply: { event: "message" } }],
      },
    });
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toMatch(/^connect setup\.login: .*answered HTTP 400/);
    expect(total(frames, "errors.setup.login")).toBe(2);
  });

  it("unmatched messages are counted per event and sampled", async () => {
    const app = await chat();
    const { frames } = await run({
      name: "unmatched",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s", socketio: { transports: ["websocket"] } },
      connections: { count: 2, rate: 100 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 3, timeout: "2s" } },
      sanity: false,
      flow: {
        data: { rows: [{ user: "ann" }], reuse: true },
        setup: setup("r-{{ conn.index }}"),
        // The reply is awaited on an event this server never sends: every message copy is unmatched.
        messages: [{ event: "chat", json: { room: "r-{{ conn.index }}", text: "x" }, reply: { event: "chat_reply" } }],
      },
    });
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThan(0);
    expect(total(frames, "unmatched.message")).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(sent);
    const samples = frames.flatMap((f) => f.samples ?? []);
    expect(samples.length).toBe(5);
    expect(JSON.parse(samples[0]!.data)).toMatchObject({ text: "x", user: "ann" });
  });

  it("server push is counted and timed by the server's own timestamp", async () => {
    const app = await chat();
    const { frames, outcome } = await run({
      name: "push",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s", socketio: { transports: ["websocket"] } },
      connections: { count: 3, rate: 1000 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 4 } },
      sanity: false,
      flow: {
        data: { rows: [{ user: "ann" }], reuse: true },
        setup: setup("news"),
        // Fire and forget: every `message` the room hands out is server push, stamped with the server's ts.
        messages: [{ event: "chat", json: { room: "news", text: "tick" }, reply: false }],
        push: [{ event: "message", timestamp: "$.ts" }],
      },
    });
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    expect(total(frames, COUNTERS.sent)).toBe(stats.chatsReceived);
    // Copies that reached a member still in its setup count too: every delivery the server made.
    expect(total(frames, COUNTERS.pushReceived) + total(frames, COUNTERS.pushClockAhead)).toBe(stats.messagesDelivered);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    const push = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.pushLatency] ?? []));
    expect(push.totalCount).toBe(total(frames, COUNTERS.pushReceived));
  });

  it("Socket.IO 2 (no catch-all listener): replies on the events the flow names are matched", async () => {
    const server = await startSocketioV2EchoServer();
    try {
      const { frames, outcome } = await run({
        name: "v2",
        target: { url: server.url, protocol: "socketio", connectTimeout: "5s", socketio: { version: 2, transports: ["websocket"] } },
        connections: { count: 3, rate: 1000 },
        scenario: { kind: "echo", duration: "1s", message: { rate: 5, timeout: "5s" } },
        flow: {
          messages: [
            { event: "chat", json: { id: "{{ msg.id }}", n: "{{ msg.seq }}" }, reply: { event: "chat", match: { path: "$.id", equals: "{{ msg.id }}" } } },
          ],
        },
      });
      expect(outcome.status).toBe("completed");
      const sent = total(frames, COUNTERS.sent);
      expect(sent).toBeGreaterThanOrEqual(12);
      expect(total(frames, COUNTERS.received)).toBe(sent);
    } finally {
      await server.close();
    }
  });

  it("mixes weighted kinds, each with its own latency; an ack is a reply", async () => {
    const app = await chat();
    const { frames, outcome } = await run({
      name: "kinds",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s", socketio: { transports: ["websocket"] } },
      connections: { count: 3, rate: 1000 },
      scenario: { kind: "echo", duration: "2s", message: { rate: 10, timeout: "5s" } },
      flow: {
        data: { rows: [{ user: "ann" }], reuse: true },
        setup: setup("k-{{ conn.index }}"),
        messages: [
          {
            name: "tracked",
            weight: 3,
            event: "chat",
            json: { room: "k-{{ conn.index }}", text: "t", clientMsgId: "{{ msg.id }}" },
            reply: { event: "message", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
          // Acknowledged: the server's { id } ack is the reply; its room copy carries no clientMsgId and matches nothing.
          { name: "acked", event: "chat", json: { room: "k-{{ conn.index }}", text: "a" }, reply: { ack: true } },
        ],
      },
    });
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    const hist = (name: string) => mergeEncoded(frames.flatMap((f) => f.histograms[name] ?? [])).totalCount;
    const tracked = hist("message.latency.tracked");
    const acked = hist("message.latency.acked");
    expect(tracked).toBeGreaterThan(acked);
    expect(acked).toBeGreaterThan(0);
    expect(tracked + acked).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(app.stats().chatsReceived).toBe(sent);
    expect(total(frames, "unmatched.message")).toBe(acked);
  });
});
