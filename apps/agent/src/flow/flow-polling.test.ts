import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, type PlanInput } from "@volley/contracts";
import { startLongpollChat, type LongpollChatStats, type TestApp } from "@volley/targets";
import { runFlow as run } from "./flow-test-kit";
import { total } from "../engine/engine-test-kit";
import type { EngineFrame } from "../engine/types";

const apps: TestApp<LongpollChatStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function chat(): Promise<TestApp<LongpollChatStats>> {
  const app = await startLongpollChat();
  apps.push(app);
  return app;
}

/** The chat's own protocol: a session from a request, polls that move a cursor, sends by POST. */
function plan(app: TestApp<LongpollChatStats>, protocol: "long-polling" | "short-polling", wait: number, count: number): PlanInput {
  return {
    name: `chat ${protocol}`,
    target: {
      url: app.url,
      protocol,
      connectTimeout: "5s",
      polling: {
        interval: "50ms",
        poll: { url: `/chat/poll?sessionId={{ vars.sessionId }}&cursor={{ vars.cursor }}&wait=${wait}`, items: "$.messages", capture: { cursor: "$.cursor" } },
      },
    },
    connections: { count, rate: 1000 },
    scenario: { kind: "broadcast", room: "chat", echo: true, duration: "2s", message: { rate: 2, timeout: "5s" } },
    flow: {
      setup: [{ request: { name: "session", method: "POST", url: "/chat/session", json: {}, capture: { sessionId: "$.sessionId", cursor: "$.cursor" } } }],
      messages: [
        {
          request: { method: "POST", url: "/chat/send", json: { sessionId: "{{ vars.sessionId }}", text: "hi #{{ msg.seq }}", clientMsgId: "{{ msg.id }}" } },
          reply: { match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
        },
      ],
    },
  };
}

/** No setup: the poll is the first thing the connection does. */
function noSession(input: PlanInput): void {
  input.flow!.setup = [];
  input.flow!.messages = [
    {
      request: { method: "POST", url: "/chat/send", json: { sessionId: "s", text: "x", clientMsgId: "{{ msg.id }}" } },
      reply: { match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
    },
  ];
}

/** What the chat handed out is exactly what Volley counted: each sender's own copy plus every other session's. */
function expectCountsMatch(frames: EngineFrame[], stats: LongpollChatStats, count: number): void {
  const sent = total(frames, COUNTERS.sent);
  const echoes = total(frames, COUNTERS.received);
  const deliveries = total(frames, COUNTERS.deliveriesReceived);
  expect(sent).toBeGreaterThanOrEqual(count * 3);
  expect(stats.sessions).toBe(count);
  expect(stats.sends).toBe(sent);
  expect(echoes).toBe(sent);
  expect(echoes + deliveries).toBe(stats.messagesDelivered);
  expect(total(frames, "events.message")).toBe(stats.messagesDelivered);
  expect(total(frames, COUNTERS.unmatched)).toBe(0);
  expect(total(frames, COUNTERS.lost)).toBe(0);
  expect(total(frames, COUNTERS.deliveriesLost)).toBe(0);
  expect(total(frames, COUNTERS.deliveriesExpected)).toBe(deliveries);
  // A session made after a send does not get it: at most every other session got every message.
  expect(deliveries).toBeLessThanOrEqual(sent * (count - 1));
}

describe("flows against a long-polling chat with its own routes", { timeout: 30_000 }, () => {
  it("long polling: held polls move the captured cursor; sends and deliveries equal the chat's counters", async () => {
    const app = await chat();
    const { frames, outcome } = await run(plan(app, "long-polling", 5000, 4));
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    expectCountsMatch(frames, stats, 4);
    // Held polls, not a busy loop: about one answered poll per message batch per session.
    expect(stats.polls).toBeLessThan(4 * (stats.sends + 2));
  });

  it("short polling: wait=0 every interval, the same counts", async () => {
    const app = await chat();
    const { frames, outcome } = await run(plan(app, "short-polling", 0, 3));
    expect(outcome.status).toBe("completed");
    expectCountsMatch(frames, app.stats(), 3);
  });

  it("a poll the chat refuses ends the connection with the chat's words", async () => {
    const app = await chat();
    const input = plan(app, "long-polling", 5000, 1);
    input.target.polling!.poll!.url = "/chat/poll?sessionId=nobody";
    input.sanity = false;
    const { frames } = await run(input);
    expect(total(frames, "errors.closed")).toBe(1);
  });

  it("connects when the first poll's socket does: a chat that is down fails the connect, refused", async () => {
    const app = await chat();
    const input = plan(app, "long-polling", 5000, 1);
    await app.close();
    apps.length = 0;
    noSession(input);
    input.target.polling!.poll!.url = "/chat/poll?sessionId=s&wait=5000";
    input.sanity = false;
    const { outcome, frames } = await run(input);
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toMatch(/refused/i);
    expect(total(frames, "errors.refused")).toBe(1);
  });

  it("a poll URL on another origin fails the connect, naming the fix", async () => {
    const app = await chat();
    const input = plan(app, "long-polling", 5000, 1);
    input.target.polling!.poll!.url = "http://127.0.0.2:1/chat/poll";
    noSession(input);
    input.sanity = false;
    const { outcome } = await run(input);
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toMatch(/is not target\.url's origin .*make it relative to target\.url/);
  });
});
