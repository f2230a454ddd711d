import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, type PlanInput } from "@volley/contracts";
import { LONGPOLL_CHAT_PATHS, startLongpollChat, type LongpollChatStats, type TestApp } from "@volley/targets";
import { histogramCount, runFlow as run } from "../flow/flow-test-kit";
import { total } from "../engine/engine-test-kit";

const apps: TestApp<LongpollChatStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

/**
 * Users of a long/short-polling chat (its own routes, ids and counters): each makes a session,
 * holds its poll loop (the connection), posts twice, each time waiting for its own message to come
 * back through a poll by the id the chat gave the post, and leaves.
 */
function plan(app: TestApp<LongpollChatStats>, protocol: "long-polling" | "short-polling", wait: number): PlanInput {
  const post = (n: number) => [
    {
      request: {
        name: `post-${n}`,
        method: "POST" as const,
        url: LONGPOLL_CHAT_PATHS.send,
        json: { sessionId: "{{ vars.sessionId }}", text: `hello ${n} from {{ conn.index }}` },
        capture: { posted: "$.id" },
      },
    },
    { waitFor: { name: `own-${n}`, match: { path: "$.id", equals: "{{ vars.posted }}" }, timeout: "5s" } },
  ];
  return {
    name: `users over ${protocol}`,
    target: {
      url: app.url,
      protocol,
      connectTimeout: "5s",
      polling: {
        interval: "50ms",
        poll: {
          url: `${LONGPOLL_CHAT_PATHS.poll}?sessionId={{ vars.sessionId }}&cursor={{ vars.cursor }}&wait=${wait}`,
          items: "$.messages",
          capture: { cursor: "$.cursor" },
        },
      },
    },
    connections: { count: 20 },
    scenario: { kind: "users", arrivalRate: 5, duration: "2s", maxUserTime: "10s" },
    flow: {
      steps: [
        { request: { name: "session", method: "POST", url: LONGPOLL_CHAT_PATHS.session, json: {}, capture: { sessionId: "$.sessionId", cursor: "$.cursor" } } },
        { connect: {} },
        ...post(1),
        { think: "50ms" },
        ...post(2),
        { disconnect: true as const },
      ],
    },
  };
}

describe("users over polling", { timeout: 30_000 }, () => {
  for (const [protocol, wait] of [
    ["long-polling", 5000],
    ["short-polling", 0],
  ] as const) {
    it(`${protocol}: every user's posts come back through its polls by the chat's id; users, sessions and posts equal the chat's counters`, async () => {
      const app = await startLongpollChat();
      apps.push(app);
      const { frames, outcome } = await run(plan(app, protocol, wait));
      expect(outcome.status, outcome.error).toBe("completed");
      const started = total(frames, COUNTERS.usersStarted);
      expect(started).toBe(10);
      expect(total(frames, COUNTERS.usersCompleted)).toBe(started);
      expect(total(frames, COUNTERS.usersFailed)).toBe(0);
      const stats = app.stats();
      expect(stats.sessions).toBe(started);
      expect(stats.sends).toBe(2 * started);
      expect(stats.polls).toBeGreaterThanOrEqual(started);
      // Each user's own two messages reached it through a poll, each wait timed from its intended start.
      expect(stats.messagesDelivered).toBeGreaterThanOrEqual(2 * started);
      for (const step of ["session", "post-1", "own-1", "post-2", "own-2"]) expect(histogramCount(frames, `step.${step}`)).toBe(started);
    });
  }
});
