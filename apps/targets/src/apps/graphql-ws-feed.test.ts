import { afterEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import { WebSocket } from "ws";
import type { TestApp } from "./app-http";
import { startGraphqlWsFeed, type FeedPost, type GraphqlWsFeedStats } from "./graphql-ws-feed";

const apps: TestApp<GraphqlWsFeedStats>[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.dispose();
  for (const a of apps.splice(0)) await a.close();
});

async function start() {
  const app = await startGraphqlWsFeed();
  apps.push(app);
  return app;
}

function client(app: TestApp<unknown>): Client {
  const c = createClient({ url: app.url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
  clients.push(c);
  return c;
}

/** Runs one query or mutation and resolves with its data (or rejects with its errors). */
function run<T>(c: Client, query: string, variables?: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    let data: T | undefined;
    c.subscribe<T>(
      { query, variables },
      {
        next: (r) => (r.errors ? reject(new Error(JSON.stringify(r.errors))) : (data = r.data as T)),
        error: (e) => reject(new Error(JSON.stringify(e))),
        complete: () => resolve(data as T),
      },
    );
  });
}

/** Subscribes and collects posts; `until(n)` resolves once n have arrived. */
function subscribe(c: Client) {
  const got: FeedPost[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const stop = c.subscribe<{ posts: FeedPost }>(
    { query: "subscription { posts { id text ts clientMsgId } }" },
    {
      next: (r) => {
        if (r.data) got.push(r.data.posts);
        for (const w of waiters.filter((w) => got.length >= w.n)) w.resolve();
      },
      error: () => undefined,
      complete: () => undefined,
    },
  );
  const until = (n: number) => new Promise<void>((resolve) => (got.length >= n ? resolve() : waiters.push({ n, resolve })));
  return { got, until, stop };
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

const POST = "mutation ($text: String!, $c: String) { post(text: $text, clientMsgId: $c) { id text ts clientMsgId } }";

describe("graphql-ws feed", () => {
  it("pushes every post to every running subscription and counts it", async () => {
    const app = await start();
    const [a, b, poster] = [client(app), client(app), client(app)];
    const subA = subscribe(a);
    const subB = subscribe(b);
    await waitFor(() => app.stats().subscriptions === 2);

    const before = Date.now();
    const made = await run<{ post: FeedPost }>(poster, POST, { text: "hello", c: "c1" });
    expect(made.post).toMatchObject({ text: "hello", clientMsgId: "c1" });
    expect(made.post.id).toMatch(/^p_/);
    expect(made.post.ts).toBeGreaterThanOrEqual(before - 1);
    await Promise.all([subA.until(1), subB.until(1)]);
    expect(subA.got).toEqual([made.post]);
    expect(subB.got).toEqual([made.post]);

    const second = await run<{ post: FeedPost }>(poster, POST, { text: "no id" });
    expect(second.post.clientMsgId).toBeNull();
    await Promise.all([subA.until(2), subB.until(2)]);
    expect(await run(poster, "{ postCount }")).toEqual({ postCount: 2 });
    expect(app.stats()).toEqual({ subscriptions: 2, activeSubscriptions: 2, mutations: 2, pushes: 4 });

    // A stopped subscription gets nothing more.
    subB.stop();
    await waitFor(() => app.stats().activeSubscriptions === 1);
    await run(poster, POST, { text: "third" });
    await subA.until(3);
    expect(subB.got).toHaveLength(2);
    const served = await (await fetch(`${app.httpUrl}/stats`)).json();
    expect(served).toEqual({ subscriptions: 2, activeSubscriptions: 1, mutations: 3, pushes: 5 });
  });

  it("keeps exact counts over a bounded burst", async () => {
    const app = await start();
    const subs = [client(app), client(app)].map(subscribe);
    await waitFor(() => app.stats().subscriptions === 2);
    const poster = client(app);
    await Promise.all(Array.from({ length: 50 }, (_, i) => run(poster, POST, { text: `t${i}`, c: `k${i}` })));
    await Promise.all(subs.map((s) => s.until(50)));
    for (const s of subs) expect(new Set(s.got.map((p) => p.clientMsgId)).size).toBe(50);
    expect(app.stats()).toMatchObject({ mutations: 50, pushes: 100 });
  });

  it("refuses a mutation without its required argument", async () => {
    const app = await start();
    await expect(run(client(app), "mutation { post { id } }")).rejects.toThrow(/text/);
    expect(app.stats().mutations).toBe(0);
  });
});
