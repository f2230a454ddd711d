import { afterEach, describe, expect, it } from "vitest";
import type { TestApp } from "./app-http";
import { startLongpollChat, type LongpollChatStats, type PollMessage } from "./longpoll-chat";

const apps: TestApp<LongpollChatStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function start() {
  const app = await startLongpollChat();
  apps.push(app);
  return app;
}

async function call<T = Record<string, unknown>>(app: TestApp<unknown>, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${app.httpUrl}${path}`, {
    method,
    ...(body !== undefined ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

async function session(app: TestApp<unknown>): Promise<string> {
  const r = await call<{ sessionId: string; cursor: number }>(app, "POST", "/chat/session");
  expect(r.status).toBe(201);
  return r.body.sessionId;
}

type Poll = { messages: PollMessage[]; cursor: number };
const poll = (app: TestApp<unknown>, sessionId: string, query = "") => call<Poll>(app, "GET", `/chat/poll?sessionId=${sessionId}${query}`);

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe("longpoll chat", () => {
  it("holds polls until a send, delivers to every session with the sender's id and counts it", async () => {
    const app = await start();
    const [a, b] = [await session(app), await session(app)];
    expect(a).not.toBe(b);
    const heldA = poll(app, a, "&cursor=0");
    const heldB = poll(app, b);
    await waitFor(() => app.stats().waitingPolls === 2);

    const before = Date.now();
    const sent = await call(app, "POST", "/chat/send", { sessionId: a, text: "hi", clientMsgId: "c1" });
    expect(sent).toEqual({ status: 202, body: { id: expect.stringMatching(/^m_/) } });
    const [ra, rb] = await Promise.all([heldA, heldB]);
    expect(ra.body).toEqual(rb.body);
    expect(ra.body.cursor).toBe(1);
    expect(ra.body.messages).toEqual([{ id: sent.body.id, seq: 1, from: a, text: "hi", ts: expect.any(Number), clientMsgId: "c1" }]);
    expect(ra.body.messages[0]!.ts).toBeGreaterThanOrEqual(before - 1);

    // Messages already there come back at once; a later session never sees what came before it.
    await call(app, "POST", "/chat/send", { sessionId: b, text: "two" });
    await call(app, "POST", "/chat/send", { sessionId: b, text: "three" });
    const late = await session(app);
    const again = await poll(app, a, "&cursor=1");
    expect(again.body.messages.map((m) => [m.text, m.from, m.clientMsgId])).toEqual([
      ["two", b, null],
      ["three", b, null],
    ]);
    expect(again.body.cursor).toBe(3);
    expect((await poll(app, late, "&cursor=0&wait=0")).body).toEqual({ messages: [], cursor: 3 });

    const served = await (await fetch(`${app.httpUrl}/stats`)).json();
    expect(served).toEqual({ sessions: 3, sends: 3, polls: 4, waitingPolls: 0, messagesDelivered: 4 });
  });

  it("answers an empty poll at its wait deadline and forgets an abandoned one", async () => {
    const app = await start();
    const s = await session(app);
    expect((await poll(app, s, "&wait=50")).body).toEqual({ messages: [], cursor: 0 });
    const abort = new AbortController();
    const gone = fetch(`${app.httpUrl}/chat/poll?sessionId=${s}`, { signal: abort.signal }).catch(() => "aborted");
    await waitFor(() => app.stats().waitingPolls === 1);
    abort.abort();
    expect(await gone).toBe("aborted");
    await waitFor(() => app.stats().waitingPolls === 0);
    await call(app, "POST", "/chat/send", { sessionId: s, text: "x" });
    expect(app.stats()).toEqual({ sessions: 1, sends: 1, polls: 2, waitingPolls: 0, messagesDelivered: 0 });
  });

  it("keeps exact counts over a bounded burst with several pollers", async () => {
    const app = await start();
    const ids = await Promise.all([session(app), session(app), session(app)]);
    const seen = await Promise.all(
      ids
        .map(async (id) => {
          const got: PollMessage[] = [];
          let cursor = 0;
          for (let i = 0; i < 60 && got.length < 40; i++) {
            const r = await poll(app, id, `&cursor=${cursor}&wait=5000`);
            got.push(...r.body.messages);
            cursor = r.body.cursor;
          }
          return got;
        })
        .concat([
          (async () => {
            for (let i = 0; i < 40; i++) await call(app, "POST", "/chat/send", { sessionId: ids[i % 3], text: `t${i}`, clientMsgId: `k${i}` });
            return [];
          })(),
        ]),
    );
    for (const got of seen.slice(0, 3)) expect(got.map((m) => m.clientMsgId)).toEqual(Array.from({ length: 40 }, (_, i) => `k${i}`));
    expect(app.stats()).toMatchObject({ sends: 40, messagesDelivered: 120, waitingPolls: 0 });
  });

  it("answers mistakes with a status naming the fix", async () => {
    const app = await start();
    expect(await call(app, "POST", "/chat/send", { sessionId: "nope", text: "x" })).toMatchObject({
      status: 404,
      body: { error: expect.stringContaining("POST /chat/session first") },
    });
    const s = await session(app);
    expect(await call(app, "POST", "/chat/send", { sessionId: s })).toEqual({ status: 400, body: { error: "text is required (a non-empty string)" } });
    expect((await poll(app, s, "&wait=-1")).status).toBe(400);
    expect((await poll(app, "nope")).status).toBe(404);
    expect((await call(app, "GET", "/chat/send")).status).toBe(405);
    expect(app.stats()).toMatchObject({ sends: 0, polls: 0 });
  });
});
