import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, type PlanInput } from "@volley/contracts";
import {
  FEED_CHAT_EVENT,
  SOCKETIO_CHAT_LOGIN_PATH,
  startFeedChat,
  startSocketioChat,
  type FeedChatOptions,
  type FeedChatStats,
  type SocketioChatStats,
  type TestApp,
} from "@volley/targets";
import { histogramCount, runFlow as run } from "../flow/flow-test-kit";
import { total } from "../engine/engine-test-kit";
import { perConnection } from "./connection-metrics";

const apps: TestApp<FeedChatStats | SocketioChatStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function chat(options: FeedChatOptions = {}): Promise<TestApp<FeedChatStats>> {
  const app = await startFeedChat(options);
  apps.push(app);
  return app;
}

const ROOM = "r{{ conn.index }}";

/** Post to the user's own room over HTTP and capture the id the chat gave the message. */
const POST = {
  request: {
    name: "post",
    method: "POST",
    url: `/api/rooms/${ROOM}/messages`,
    json: { text: "hello from {{ conn.index }}", clientMsgId: "c{{ conn.index }}-{{ random.int(1, 1000000) }}" },
    capture: { posted: "$.id" },
  },
};
/** The posted message, by the chat's id, on the user's SSE feed. */
const ON_FEED = {
  waitFor: { name: "on-feed", connection: "feed", event: FEED_CHAT_EVENT, match: { path: "$.id", equals: "{{ vars.posted }}" }, timeout: "5s" },
};
const FEED = (extra: Record<string, unknown> = {}) => ({
  connect: { connection: "feed", protocol: "sse", url: `/api/rooms/${ROOM}/events`, ...extra },
});

const usersPlan = (url: string, steps: readonly unknown[]): PlanInput =>
  ({
    name: "chat users",
    target: { url, protocol: "ws", connectTimeout: "5s" },
    connections: { count: 20 },
    scenario: { kind: "users", arrivalRate: 5, duration: "1s", maxUserTime: "20s" },
    flow: { steps },
  }) as PlanInput;

describe("users holding several connections", { timeout: 60_000 }, () => {
  it("each user holds a WebSocket and an SSE feed to one chat, posts over HTTP, sees each post on both, and calls over the socket: the chat's counters equal Volley's", async () => {
    const app = await chat();
    const steps = [
      { connect: { query: { room: ROOM } } },
      FEED(),
      {
        loop: {
          count: 3,
          steps: [
            POST,
            ON_FEED,
            { waitFor: { name: "on-socket", match: { path: "$.message.id", equals: "{{ vars.posted }}" }, timeout: "5s" } },
            { think: "10ms" },
          ],
        },
      },
      {
        send: {
          name: "history",
          json: { type: "history", requestId: "{{ msg.id }}", limit: 3 },
          reply: { match: { path: "$.requestId", equals: "{{ msg.id }}" } },
          capture: { latest: "$.messages" },
        },
      },
      { disconnect: { connection: "feed" } },
      { disconnect: true },
    ];
    const { frames, outcome } = await run(usersPlan(app.url, steps));
    expect(outcome.status, outcome.error).toBe("completed");
    const stats = app.stats();
    expect(total(frames, COUNTERS.usersStarted)).toBe(5);
    expect(total(frames, COUNTERS.usersCompleted)).toBe(5);
    expect(total(frames, COUNTERS.usersFailed)).toBe(0);
    // Every message posted reached its poster once on each connection, and Volley saw each there.
    expect(stats.posts).toBe(15);
    expect(stats.streamDeliveries).toBe(15);
    expect(stats.socketDeliveries).toBe(15);
    expect(histogramCount(frames, "step.post")).toBe(stats.posts);
    expect(histogramCount(frames, "step.on-feed")).toBe(stats.streamDeliveries);
    expect(histogramCount(frames, "step.on-socket")).toBe(stats.socketDeliveries);
    // The WebSocket call and its reply, matched by the id the call carried.
    expect(stats.historyRequests).toBe(5);
    expect(total(frames, COUNTERS.sent)).toBe(5);
    expect(total(frames, COUNTERS.received)).toBe(5);
    expect(histogramCount(frames, "step.history")).toBe(5);
    // Two connections a user: the totals count both, each connection its own.
    expect(stats.streams).toBe(5);
    expect(stats.sockets).toBe(5);
    expect(total(frames, COUNTERS.connectionsOpened)).toBe(10);
    expect(total(frames, COUNTERS.connectionsClosed)).toBe(10);
    expect(total(frames, perConnection(COUNTERS.connectionsOpened, "feed"))).toBe(stats.streams);
    expect(total(frames, perConnection(COUNTERS.connectionsOpened, "main"))).toBe(stats.sockets);
    expect(histogramCount(frames, perConnection(HISTOGRAMS.connect, "feed"))).toBe(5);
    expect(histogramCount(frames, HISTOGRAMS.connect)).toBe(10);
    expect(stats.activeStreams + stats.activeSockets).toBe(0);
  });

  it("each connection keeps its own reconnect policy: the feed the chat ends after every message comes back, the socket is never touched", async () => {
    const app = await chat({ endStreamsAfter: 1 });
    const steps = [
      { connect: { query: { room: ROOM } } },
      FEED({ reconnect: { policy: "immediate", maxAttempts: 3 } }),
      // The think gives the feed the chat just ended time to come back before the next post.
      { loop: { count: 3, steps: [POST, ON_FEED, { think: "200ms" }] } },
      { disconnect: { connection: "feed" } },
      { disconnect: true },
    ];
    const { frames, outcome } = await run(usersPlan(app.url, steps));
    expect(outcome.status, outcome.error).toBe("completed");
    const stats = app.stats();
    expect(total(frames, COUNTERS.usersCompleted)).toBe(5);
    expect(stats.posts).toBe(15);
    expect(histogramCount(frames, "step.on-feed")).toBe(stats.streamDeliveries);
    expect(stats.streamDeliveries).toBe(15);
    // Every stream the chat ended was a drop of the feed, and each came back: 1 + 3 streams a user.
    expect(stats.streamsEnded).toBe(15);
    expect(total(frames, perConnection(COUNTERS.connectionsDropped, "feed"))).toBe(stats.streamsEnded);
    expect(total(frames, perConnection(COUNTERS.reconnects, "feed"))).toBe(stats.streamsEnded);
    expect(stats.streams).toBe(5 + total(frames, perConnection(COUNTERS.reconnects, "feed")));
    expect(histogramCount(frames, perConnection(HISTOGRAMS.reconnectTime, "feed"))).toBe(15);
    // The socket: one each, never dropped; the totals are the feed's and the socket's together.
    expect(stats.sockets).toBe(5);
    expect(total(frames, perConnection(COUNTERS.connectionsDropped, "main"))).toBe(0);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(15);
    expect(total(frames, COUNTERS.reconnects)).toBe(15);
    expect(total(frames, COUNTERS.connectionsOpened)).toBe(stats.streams + stats.sockets);
  });

  it("a connection whose first connect names it is the one unnamed steps use: an HTTP target's users hold an SSE feed", async () => {
    const app = await chat();
    const steps = [
      FEED(),
      { loop: { count: 2, steps: [POST, { waitFor: { name: "seen", event: FEED_CHAT_EVENT, match: { path: "$.id", equals: "{{ vars.posted }}" } } }] } },
      { disconnect: true },
    ];
    const { frames, outcome } = await run({
      ...usersPlan(app.httpUrl, steps),
      target: { url: app.httpUrl, protocol: "http", connectTimeout: "5s" },
    } as PlanInput);
    expect(outcome.status, outcome.error).toBe("completed");
    const stats = app.stats();
    expect(total(frames, COUNTERS.usersCompleted)).toBe(5);
    expect(stats.posts).toBe(10);
    expect(histogramCount(frames, "step.seen")).toBe(stats.streamDeliveries);
    expect(stats.streams).toBe(5);
    expect(stats.activeStreams).toBe(0);
  });

  it("any protocol beside the target's: a user on the chat's WebSocket also logs in to a Socket.IO chat on another server and talks there, acknowledged", async () => {
    const app = await chat();
    const io = await startSocketioChat();
    apps.push(io);
    const steps = [
      { connect: { query: { room: ROOM } } },
      {
        request: {
          name: "login",
          method: "POST",
          url: `${io.httpUrl}${SOCKETIO_CHAT_LOGIN_PATH}`,
          json: { user: "u{{ conn.index }}" },
          capture: { token: "$.token" },
        },
      },
      { connect: { connection: "io", protocol: "socketio", url: io.httpUrl, auth: { token: "{{ vars.token }}" } } },
      { send: { name: "join", connection: "io", event: "join", json: { room: ROOM } } },
      { waitFor: { name: "joined", connection: "io", event: "joined", match: { path: "$.room", equals: ROOM } } },
      {
        send: {
          name: "chat",
          connection: "io",
          event: "chat",
          json: { room: ROOM, text: "hi", clientMsgId: "{{ msg.id }}" },
          ack: true,
          capture: { sent: "$.id" },
        },
      },
      { waitFor: { name: "echoed", connection: "io", event: "message", match: { path: "$.id", equals: "{{ vars.sent }}" } } },
      // And on the first connection, the chat it came for.
      POST,
      { waitFor: { name: "on-socket", match: { path: "$.message.id", equals: "{{ vars.posted }}" } } },
      { disconnect: { connection: "io" } },
      { disconnect: true },
    ];
    const { frames, outcome } = await run(usersPlan(app.url, steps));
    expect(outcome.status, outcome.error).toBe("completed");
    const ioStats = io.stats() as SocketioChatStats;
    const stats = app.stats() as FeedChatStats;
    expect(total(frames, COUNTERS.usersCompleted)).toBe(5);
    expect(ioStats).toMatchObject({ logins: 5, connections: 5, joins: 5, chatsReceived: 5, messagesDelivered: 5 });
    expect(histogramCount(frames, "step.echoed")).toBe(ioStats.messagesDelivered);
    expect(total(frames, perConnection(COUNTERS.connectionsOpened, "io"))).toBe(ioStats.connections);
    expect(stats.sockets).toBe(5);
    expect(histogramCount(frames, "step.on-socket")).toBe(stats.socketDeliveries);
    expect(stats.socketDeliveries).toBe(5);
  });
});
