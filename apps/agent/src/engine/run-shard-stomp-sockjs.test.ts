import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startStompEchoServer, startStompSockjsChat, STOMP_CHAT_LOGIN, STOMP_CHAT_SEND, STOMP_CHAT_TOPIC } from "@volley/targets";
import { freePort } from "../drivers/driver-test-kit";
import { total } from "./engine-test-kit";
import { runShard } from "./run-shard";
import type { EngineFrame } from "./types";

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function serve<T extends { close(): Promise<void> }>(started: Promise<T>): Promise<T> {
  const s = await started;
  servers.push(s);
  return s;
}

async function run(plan: PlanInput): Promise<{ frames: EngineFrame[]; outcome: Awaited<ReturnType<typeof runShard>> }> {
  const frames: EngineFrame[] = [];
  const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
  return { frames, outcome };
}

const TRANSPORTS = ["websocket", "xhr-streaming", "xhr-polling"] as const;

describe("runs over STOMP over SockJS", { timeout: 30_000 }, () => {
  // Spring's chat: SEND to /app/chat.send, the server's own JSON broadcast on /topic/public to every
  // subscriber, the sender included; every SEND asks for a receipt; heart-beats both ways.
  it.each(TRANSPORTS)("a Spring-like chat over %s: Volley's counts are the server's", async (transport) => {
    const app = await serve(startStompSockjsChat({ heartbeatMs: 100, users: { alice: "secret" } }));
    const n = 3;
    const { frames, outcome } = await run({
      name: `stomp over sockjs chat (${transport})`,
      target: {
        url: app.url,
        protocol: "stomp",
        connectTimeout: "5s",
        stomp: { transports: [transport], login: "alice", passcode: "secret", heartbeat: { outgoing: 100, incoming: 100 } },
      },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "broadcast", room: "chat", echo: true, duration: "2s", message: { rate: 2, timeout: "5s" } },
      flow: {
        messages: [
          {
            event: STOMP_CHAT_SEND,
            json: { content: "hello #{{ msg.seq }}", clientMsgId: "{{ msg.id }}" },
            headers: { receipt: "r-{{ msg.id }}" },
            reply: { event: STOMP_CHAT_TOPIC, match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.error ?? outcome.status).toBe("completed");
    const stats = app.stats();
    const sent = total(frames, COUNTERS.sent);
    const received = total(frames, COUNTERS.received);
    const deliveries = total(frames, COUNTERS.deliveriesReceived);
    expect(sent).toBeGreaterThanOrEqual(n * 3);
    expect(stats.sessions).toBe(n);
    // Every SEND reached the chat handler as its own JSON, and each was broadcast once...
    expect(stats).toMatchObject({ sends: sent, broadcast: sent, rejected: 0, refused: 0, errors: 0 });
    // ...to every subscriber (broadcast × subscribers, less copies to a member not yet subscribed when
    // the first sends went out): every copy the server wrote reached Volley, the sender's as its reply,
    // the others' as deliveries (or a late joiner's, subscribed at the server just before it opened).
    expect(received).toBe(sent);
    expect(total(frames, `events.${STOMP_CHAT_TOPIC}`)).toBe(stats.messages);
    expect(received + deliveries + total(frames, COUNTERS.deliveriesLateJoiner)).toBe(stats.messages);
    expect(stats.messages).toBeLessThanOrEqual(stats.broadcast * n);
    expect(stats.messages).toBeGreaterThan(stats.broadcast * (n - 1));
    expect(total(frames, COUNTERS.deliveriesExpected)).toBe(deliveries);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
    expect(total(frames, COUNTERS.unmatched)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
    // A receipt for each SUBSCRIBE (the connection opened on it), each SEND, and each DISCONNECT at the end.
    await expect.poll(() => app.stats().receipts, { timeout: 3000 }).toBe(n + sent + n);
    // Heart-beats both ways through the 2 s run.
    expect(stats.heartbeatsReceived).toBeGreaterThan(n);
    expect(stats.heartbeatsSent).toBeGreaterThan(n);
    expect(mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? [])).totalCount).toBe(sent);
  });

  it("an endpoint behind a log-in (xhr-polling): the flow's POST /login cookie goes on every SockJS request", async () => {
    const app = await serve(startStompSockjsChat({ sessionCookie: "SESSION=s3cr3t", users: { alice: "pw" } }));
    const n = 2;
    const { frames, outcome } = await run({
      name: "stomp over sockjs behind a log-in",
      target: { url: app.url, protocol: "stomp", connectTimeout: "5s", stomp: { transports: ["xhr-polling"] } },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "broadcast", room: "chat", echo: true, duration: "1s", message: { rate: 2, timeout: "5s" } },
      flow: {
        setup: [{ request: { name: "login", method: "POST", url: STOMP_CHAT_LOGIN, json: { username: "alice", password: "pw" }, expect: { status: 204 } } }],
        messages: [
          {
            event: STOMP_CHAT_SEND,
            json: { content: "hi", clientMsgId: "{{ msg.id }}" },
            reply: { event: STOMP_CHAT_TOPIC, match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    expect(outcome.error ?? outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(n * 2);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(app.stats()).toMatchObject({ logins: n, sessions: n, broadcast: sent, unauthorized: 0 });
  });

  it("echo of Volley's own messages through the reference broker's /sockjs (xhr-streaming): every one back", async () => {
    const server = await serve(startStompEchoServer());
    const { frames, outcome } = await run({
      name: "stomp over sockjs echo",
      target: { url: server.sockjsUrl, protocol: "stomp", connectTimeout: "5s", stomp: { transports: ["xhr-streaming"] } },
      connections: { count: 4, rate: 1000 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 10, timeout: "3s" } },
    });
    expect(outcome.status).toBe("completed");
    const sent = outcome.totals.sent;
    expect(sent).toBeGreaterThanOrEqual(4 * 10);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    expect(total(frames, COUNTERS.connectionsOpened)).toBe(4);
  });

  it("broadcast without a flow through the chat's simple broker (/topic/{room}): the sender's own copy a round trip, the rest deliveries", async () => {
    const app = await serve(startStompSockjsChat());
    const n = 3;
    const { frames, outcome } = await run({
      name: "stomp over sockjs broadcast",
      target: { url: app.url, protocol: "stomp", connectTimeout: "5s", stomp: { transports: ["websocket"], roomDestination: "/topic/{room}" } },
      connections: { count: n, rate: 1000 },
      scenario: { kind: "broadcast", room: "lobby", duration: "1s", message: { rate: 10, timeout: "3s" } },
    });
    expect(outcome.status).toBe("completed");
    const sent = outcome.totals.sent;
    expect(sent).toBeGreaterThanOrEqual(n * 10);
    const { expected } = outcome.totals.deliveries!;
    expect(outcome.totals.deliveries).toEqual({ expected, received: expected, lost: 0, remote: 0 });
    expect(outcome.totals.received).toBe(sent);
    const stats = app.stats();
    expect(stats.sends).toBe(sent);
    // Every copy the broker wrote is Volley's: the sender's, the members' it expected, and the copies
    // of members the server had subscribed a moment before their connection opened (late joiners).
    expect(stats.messages).toBe(sent + expected + total(frames, COUNTERS.deliveriesLateJoiner));
    expect(stats.messages).toBeLessThanOrEqual(sent * n);
  });

  it("groups through the reference broker over SockJS: each group's topic reaches its other members only", async () => {
    const server = await serve(startStompEchoServer());
    const { frames, outcome } = await run({
      name: "stomp over sockjs groups",
      target: { url: server.sockjsUrl, protocol: "stomp", connectTimeout: "5s", stomp: { transports: ["xhr-polling"] } },
      connections: { count: 6, rate: 1000 },
      scenario: { kind: "groups", size: 3, duration: "1s", message: { rate: 5, timeout: "3s" } },
    });
    expect(outcome.status).toBe("completed");
    const sent = outcome.totals.sent;
    expect(sent).toBeGreaterThanOrEqual(6 * 5);
    const { expected } = outcome.totals.deliveries!;
    // Each message to its group's two other members, less those not yet subscribed when it went out.
    expect(expected + total(frames, COUNTERS.deliveriesLateJoiner)).toBeLessThanOrEqual(sent * 2);
    expect(expected).toBeGreaterThan(sent);
    expect(outcome.totals.deliveries).toEqual({ expected, received: expected, lost: 0, remote: 0 });
    expect(total(frames, COUNTERS.deliveriesDuplicated)).toBe(0);
    expect(total(frames, "errors.protocol")).toBe(0);
  });
});

describe("STOMP over SockJS runs that cannot connect say why", { timeout: 30_000 }, () => {
  const plan = (url: string, stomp: Record<string, unknown> = {}): PlanInput => ({
    name: "stomp over sockjs refused",
    target: { url, protocol: "stomp", connectTimeout: "3s", stomp },
    connections: { count: 2, rate: 1000 },
    scenario: { kind: "echo", duration: "200ms", message: { rate: 5, timeout: "1s" } },
    sanity: false,
  });

  it("an unreachable endpoint: the URL and the cause", async () => {
    const url = `http://127.0.0.1:${await freePort()}/ws`;
    const { frames, outcome } = await run(plan(url));
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toContain(`connect refused: ${url} (ECONNREFUSED)`);
    expect(total(frames, "errors.refused")).toBe(2);
  });

  it("a bad passcode: the server's ERROR message quoted", async () => {
    const app = await serve(startStompSockjsChat({ users: { alice: "secret" } }));
    const { frames, outcome } = await run(plan(app.url, { login: "alice", passcode: "nope" }));
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toContain(
      'the broker answered CONNECT with ERROR "Bad credentials for login alice": check stomp.login, stomp.passcode and stomp.host',
    );
    expect(total(frames, "errors.handshake")).toBe(2);
    expect(app.stats().refused).toBe(2);
  });

  it("an http:// URL with no SockJS server: it did not answer /info, and a plain WebSocket endpoint wants ws://", async () => {
    const server = await serve(startStompEchoServer());
    const { outcome } = await run(plan(`http://127.0.0.1:${server.port}/stomp`));
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toMatch(
      /the endpoint did not answer SockJS \/info \(HTTP 404 at .*\/stomp\/info\): .*a ws:\/\/ or wss:\/\/ URL if it is a plain WebSocket STOMP endpoint/,
    );
  });
});
