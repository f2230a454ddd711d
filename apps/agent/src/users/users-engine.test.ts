import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, type PlanInput } from "@volley/contracts";
import {
  SSE_NEWS_PATHS,
  startJsonRpcWs,
  startSseNews,
  startWsShop,
  WS_SHOP_PATHS,
  type JsonRpcStats,
  type SseNewsStats,
  type TestApp,
  type WsShopStats,
} from "@volley/targets";
import { histogramCount, runFlow as run } from "../flow/flow-test-kit";
import { total } from "../engine/engine-test-kit";

const apps: TestApp<WsShopStats | JsonRpcStats | SseNewsStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function shop(options: Parameters<typeof startWsShop>[0] = {}): Promise<TestApp<WsShopStats>> {
  const app = await startWsShop(options);
  apps.push(app);
  return app;
}

/** Log in, connect with the token, post an order, then cancel it by the id from the reply. */
const ORDER_AND_CANCEL = [
  {
    request: {
      name: "login",
      method: "POST",
      url: WS_SHOP_PATHS.login,
      json: { user: "u{{ conn.index }}", password: "secret" },
      capture: { token: "$.token" },
    },
  },
  { connect: { query: { token: "{{ vars.token }}" } } },
  {
    send: {
      name: "order",
      json: { type: "order", item: "{{ random.pick(tea, cake, jam) }}", qty: "{{ random.int(1, 3) }}" },
      reply: { match: { path: "$.type", equals: "order.created" } },
      capture: { order: "$.order" },
    },
  },
  { think: { min: "20ms", max: "80ms" } },
  {
    if: { var: "vars.order.status", equals: "open" },
    steps: [
      {
        send: {
          name: "cancel",
          json: { type: "cancel", orderId: "{{ vars.order.id }}" },
          reply: { match: { path: "$.orderId", equals: "{{ vars.order.id }}" } },
        },
      },
    ],
  },
  { disconnect: true },
] as const;

const usersPlan = (url: string, steps: readonly unknown[], over: Partial<{ count: number; arrivalRate: number; duration: string }> = {}): PlanInput =>
  ({
    name: "shop users",
    target: { url, protocol: "ws", connectTimeout: "5s" },
    connections: { count: over.count ?? 50 },
    scenario: { kind: "users", arrivalRate: over.arrivalRate ?? 10, duration: over.duration ?? "2s", maxUserTime: "20s" },
    flow: { steps },
  }) as PlanInput;

describe("users: arrive, run their steps, leave", { timeout: 60_000 }, () => {
  it("each user logs in, orders and cancels by the id from the reply: the shop's own counters equal Volley's", async () => {
    const app = await shop();
    const { frames, outcome } = await run(usersPlan(app.url, ORDER_AND_CANCEL));
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    // 10 users a second for 2 s: exactly 20 arrivals, every one finished.
    expect(total(frames, COUNTERS.usersStarted)).toBe(20);
    expect(total(frames, COUNTERS.usersCompleted)).toBe(20);
    expect(total(frames, COUNTERS.usersFailed)).toBe(0);
    expect(stats.logins).toBe(20);
    expect(stats.connections).toBe(20);
    expect(stats.ordersCreated).toBe(20);
    expect(stats.ordersCancelled).toBe(20);
    expect(stats.errors).toBe(0);
    expect(total(frames, COUNTERS.sent)).toBe(40);
    expect(total(frames, COUNTERS.received)).toBe(40);
    expect(total(frames, COUNTERS.connectionsOpened)).toBe(20);
    expect(total(frames, COUNTERS.connectionsClosed)).toBe(20);
    for (const step of ["login", "order", "cancel"]) expect(histogramCount(frames, `step.${step}`)).toBe(20);
    expect(histogramCount(frames, HISTOGRAMS.userTime)).toBe(20);
    expect(histogramCount(frames, HISTOGRAMS.messageLatency)).toBe(40);
  });

  it("loops and weighted choices: each user orders three times and cancels when the choice says so", async () => {
    const app = await shop();
    const steps = [
      ...ORDER_AND_CANCEL.slice(0, 2),
      {
        loop: {
          count: 3,
          steps: [
            ORDER_AND_CANCEL[2],
            {
              choice: [
                { weight: 1, steps: [ORDER_AND_CANCEL[4].steps[0]] },
                { weight: 1, steps: [{ think: "5ms" }] },
              ],
            },
          ],
        },
      },
    ];
    const { frames, outcome } = await run(usersPlan(app.url, steps, { arrivalRate: 5 }));
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    expect(total(frames, COUNTERS.usersCompleted)).toBe(10);
    expect(stats.ordersCreated).toBe(30);
    expect(histogramCount(frames, "step.order")).toBe(30);
    // The choice went both ways, and every cancel Volley counted is one the shop made.
    expect(stats.ordersCancelled).toBeGreaterThan(0);
    expect(stats.ordersCancelled).toBeLessThan(30);
    expect(histogramCount(frames, "step.cancel")).toBe(stats.ordersCancelled);
    expect(total(frames, COUNTERS.sent)).toBe(30 + stats.ordersCancelled);
  });

  it("a capture that finds nothing fails that user's step, counted by name; the run goes on", async () => {
    const app = await shop();
    const steps = [
      ...ORDER_AND_CANCEL.slice(0, 2),
      {
        send: {
          name: "order",
          json: { type: "order", item: "tea", qty: 1 },
          reply: { match: { path: "$.type", equals: "order.created" } },
          capture: { receipt: "$.receipt" },
        },
      },
      { send: { name: "never", json: { type: "order", item: "jam", qty: 1 } } },
    ];
    const { frames, outcome } = await run(usersPlan(app.url, steps));
    expect(outcome.status).toBe("completed");
    expect(total(frames, COUNTERS.usersFailed)).toBe(20);
    expect(total(frames, "errors.step.order")).toBe(20);
    expect(app.stats().ordersCreated).toBe(20);
    const samples = frames.flatMap((f) => f.samples ?? []).filter((s) => s.event === "step.order");
    expect(samples[0]?.data).toMatch(/capture receipt: not found/);
  });

  it("arrivals beyond connections.count are dropped and counted, never queued", async () => {
    const app = await shop();
    const steps = [...ORDER_AND_CANCEL.slice(0, 2), { think: "600ms" }, { disconnect: true }];
    const { frames, outcome } = await run(usersPlan(app.url, steps, { count: 2, arrivalRate: 20, duration: "1s" }));
    expect(outcome.status).toBe("completed");
    const started = total(frames, COUNTERS.usersStarted);
    const dropped = total(frames, COUNTERS.usersDropped);
    expect(started + dropped).toBe(20);
    expect(started).toBeLessThanOrEqual(4);
    expect(app.stats().logins).toBe(started);
  });

  it("a refused connect fails the user (connections.failed, errors by class) and a shard that never connects errors", async () => {
    const app = await shop();
    const steps = [{ connect: { query: { token: "not-a-token" } } }, { send: { json: { type: "order", item: "tea", qty: 1 } } }];
    const { frames, outcome } = await run(usersPlan(app.url, steps, { arrivalRate: 5, duration: "1s" }));
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toMatch(/connect/);
    expect(total(frames, COUNTERS.connectionsFailed)).toBe(5);
    expect(total(frames, COUNTERS.usersFailed)).toBe(5);
    expect(app.stats().badTokens).toBe(5);
  });

  it("reconnects users the server drops, counts reconnects and their time, and counts the sends a user without a policy could not make", async () => {
    // The shop closes every socket 300 ms after it opened (1012, as a deploy does); each user orders 4 times, 150 ms apart.
    const loop = (reconnect: unknown) => [
      ORDER_AND_CANCEL[0],
      { connect: { query: { token: "{{ vars.token }}" }, ...(reconnect ? { reconnect } : {}) } },
      {
        loop: {
          count: 4,
          steps: [
            { send: { name: "order", json: { type: "order", item: "tea", qty: 1 }, reply: { match: { path: "$.type", equals: "order.created" } } } },
            { think: "150ms" },
          ],
        },
      },
    ];
    const app = await shop({ dropAfterMs: 300 });
    const withPolicy = await run(usersPlan(app.url, loop({ policy: "backoff", delay: "20ms", maxAttempts: 5 }), { arrivalRate: 5, duration: "1s" }));
    expect(withPolicy.outcome.status).toBe("completed");
    const f = withPolicy.frames;
    const stats = app.stats();
    expect(total(f, COUNTERS.usersStarted)).toBe(5);
    // A drop between sends is healed; one that catches a send waiting for its reply fails that user (the reply cannot come).
    expect(total(f, COUNTERS.connectionsDropped)).toBe(stats.drops);
    expect(total(f, COUNTERS.reconnects)).toBeGreaterThan(0);
    expect(histogramCount(f, HISTOGRAMS.reconnectTime)).toBe(total(f, COUNTERS.reconnects));
    expect(stats.connections).toBe(5 + total(f, COUNTERS.reconnects));
    expect(total(f, COUNTERS.usersCompleted) + total(f, COUNTERS.usersFailed)).toBe(5);
    // Every order the shop made is one Volley counted sent and received, every send is accounted for.
    expect(total(f, COUNTERS.received)).toBe(stats.ordersCreated);
    expect(total(f, COUNTERS.sent)).toBe(total(f, COUNTERS.received) + total(f, COUNTERS.lost));
    expect(total(f, COUNTERS.usersCompleted)).toBeGreaterThan(0);

    const app2 = await shop({ dropAfterMs: 300 });
    const without = await run(usersPlan(app2.url, loop(undefined), { arrivalRate: 5, duration: "1s" }));
    const g = without.frames;
    // No policy: after the drop the next send cannot go out; it is counted, and the user fails.
    expect(total(g, COUNTERS.reconnects)).toBe(0);
    expect(total(g, COUNTERS.unsent)).toBeGreaterThan(0);
    expect(total(g, COUNTERS.usersFailed)).toBe(5);
    expect(total(g, COUNTERS.unsent) + total(g, COUNTERS.lost)).toBe(5);
    expect(total(g, COUNTERS.received)).toBe(app2.stats().ordersCreated);
  });

  it("a loop `over` a time with fire-and-forget sends ends on the clock and lets the event loop turn", async () => {
    const app = await startJsonRpcWs();
    apps.push(app);
    const steps = [{ connect: {} }, { loop: { over: "300ms", steps: [{ send: { json: { jsonrpc: "2.0", method: "echo" } } }] } }, { disconnect: true }];
    const { frames, outcome } = await run(usersPlan(app.url, steps, { arrivalRate: 2, duration: "1s" }));
    expect(outcome.status).toBe("completed");
    expect(total(frames, COUNTERS.usersCompleted)).toBe(2);
    // Frames kept coming while the users sent (the loop yielded), and the server got every notification.
    expect(frames.length).toBeGreaterThanOrEqual(1);
    expect((app.stats() as JsonRpcStats).notifications).toBe(total(frames, COUNTERS.sent));
    expect(total(frames, COUNTERS.sent)).toBeGreaterThan(10);
  });

  it("loops while a value the server computed is below a bound and branches on numeric comparisons: the server's counts equal Volley's", async () => {
    const app = await startJsonRpcWs();
    apps.push(app);
    /** A JSON-RPC call answered by the id it carried; `add` returns the server's sum, captured as the running total. */
    const call = (name: string | undefined, method: string, params: unknown, capture?: Record<string, string>) => ({
      send: {
        ...(name ? { name } : {}),
        json: { jsonrpc: "2.0", id: "{{ msg.id }}", method, params },
        reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
        ...(capture ? { capture } : {}),
      },
    });
    const addOne = call(undefined, "add", ["{{ vars.total }}", 1], { total: "$.result" });
    const wrong = (name: string) => ({ waitFor: { name, match: { path: "$.never" }, timeout: "10ms" } });
    const steps = [
      { connect: {} },
      call("start", "add", [0, 1], { total: "$.result" }),
      {
        loop: {
          name: "count-up",
          count: 10,
          while: { var: "vars.total", below: 4 },
          steps: [
            { if: { var: "vars.total", atLeast: 2 }, steps: [call("late", "echo", { at: "{{ vars.total }}" })], else: [call("early", "echo", {})] },
            addOne,
            { think: "10ms" },
          ],
        },
      },
      // The loop stopped at the first total not below 4: exactly 4.
      { if: { var: "vars.total", matches: "^4$" }, steps: [call("done", "echo", {})], else: [wrong("wrong-total")] },
      { disconnect: true },
    ];
    const { frames, outcome } = await run(usersPlan(app.url, steps, { arrivalRate: 5, duration: "1s" }));
    expect(outcome.status, outcome.error).toBe("completed");
    expect(total(frames, COUNTERS.usersCompleted)).toBe(5);
    expect(total(frames, COUNTERS.usersFailed)).toBe(0);
    // Per user: start (total 1), then passes at totals 1, 2 and 3 — early once, late twice, three adds — and done.
    expect(histogramCount(frames, "step.start")).toBe(5);
    expect(histogramCount(frames, "step.early")).toBe(5);
    expect(histogramCount(frames, "step.late")).toBe(10);
    // An unnamed send in a while-loop keeps its positional name (step 3, its 2nd step).
    expect(histogramCount(frames, "step.send-3-2")).toBe(15);
    expect(histogramCount(frames, "step.done")).toBe(5);
    const stats = app.stats() as JsonRpcStats;
    expect(stats.requests).toBe(40);
    expect(stats.responses).toBe(40);
    expect(stats.errors).toBe(0);
    expect(total(frames, COUNTERS.sent)).toBe(stats.requests);
    expect(total(frames, COUNTERS.received)).toBe(stats.responses);

    // With count, whichever ends first: two passes, though the total stays below 100.
    const app2 = await startJsonRpcWs();
    apps.push(app2);
    const bounded = [
      { connect: {} },
      call("start", "add", [0, 1], { total: "$.result" }),
      { loop: { count: 2, while: { var: "vars.total", below: 100 }, steps: [addOne] } },
      { if: { var: "vars.total", equals: 3 }, steps: [], else: [wrong("wrong-total")] },
    ];
    const second = await run(usersPlan(app2.url, bounded, { arrivalRate: 5, duration: "1s" }));
    expect(total(second.frames, COUNTERS.usersCompleted)).toBe(5);
    expect((app2.stats() as JsonRpcStats).requests).toBe(15);
    expect(total(second.frames, COUNTERS.received)).toBe(15);
  });

  it("a while-loop that never ends is stopped at maxUserTime: the user fails, counted by name, every call still counted", async () => {
    const app = await startJsonRpcWs();
    apps.push(app);
    const add = {
      send: {
        name: "add",
        json: { jsonrpc: "2.0", id: "{{ msg.id }}", method: "add", params: ["{{ vars.total }}", 1] },
        reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
        capture: { total: "$.result" },
      },
    };
    const steps = [
      { connect: {} },
      { ...add, send: { ...add.send, name: "start", json: { ...add.send.json, params: [0, 1] } } },
      { loop: { name: "forever", while: { var: "vars.total", above: 0 }, steps: [add, { think: "50ms" }] } },
    ];
    const plan = usersPlan(app.url, steps, { arrivalRate: 5, duration: "1s" }) as { scenario: Record<string, unknown> };
    const { frames, outcome } = await run({ ...plan, scenario: { ...plan.scenario, maxUserTime: "400ms" } } as PlanInput);
    expect(outcome.status, outcome.error).toBe("completed");
    expect(total(frames, COUNTERS.usersStarted)).toBe(5);
    expect(total(frames, COUNTERS.usersFailed)).toBe(5);
    // Stopped before a pass (the loop's own check) or before a timed step inside it.
    expect(total(frames, "errors.step.forever") + total(frames, "errors.step.add")).toBe(5);
    const stats = app.stats() as JsonRpcStats;
    expect(stats.requests).toBe(total(frames, COUNTERS.sent));
    expect(stats.responses).toBe(total(frames, COUNTERS.received));
    // About 8 passes each in 400 ms, and not one more after maxUserTime.
    expect(stats.requests).toBeGreaterThan(10);
    expect(stats.requests).toBeLessThanOrEqual(5 * 10);
  });

  it("a user's sends carry msg.id and msg.seq: JSON-RPC replies are matched by the id each call carried", async () => {
    const app = await startJsonRpcWs();
    apps.push(app);
    const steps = [
      { connect: {} },
      {
        loop: {
          count: 3,
          steps: [
            {
              send: {
                name: "call",
                json: { jsonrpc: "2.0", id: "{{ msg.id }}", method: "echo", params: { seq: "{{ msg.seq }}" } },
                reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
                capture: { echoed: "$.result.seq" },
              },
            },
            { think: "10ms" },
          ],
        },
      },
      // The last call's counter came back: the third send of the user is msg.seq 2.
      { if: { var: "vars.echoed", equals: 2 }, steps: [], else: [{ waitFor: { name: "wrong-seq", match: { path: "$.never" }, timeout: "10ms" } }] },
    ];
    const { frames, outcome } = await run(usersPlan(app.url, steps, { arrivalRate: 5, duration: "1s" }));
    expect(outcome.status).toBe("completed");
    expect(total(frames, COUNTERS.usersCompleted)).toBe(5);
    expect(total(frames, COUNTERS.received)).toBe(15);
    expect((app.stats() as JsonRpcStats).requests).toBe(15);
  });

  it("an SSE user holds its stream and publishes over HTTP: it waits on the stream for the item its own POST made", async () => {
    const app = await startSseNews({ keepaliveMs: 50 });
    apps.push(app);
    const steps = [
      { connect: { query: { topic: "t{{ conn.index }}" } } },
      {
        loop: {
          count: 2,
          steps: [
            {
              request: {
                name: "publish",
                method: "POST",
                url: `${SSE_NEWS_PATHS.publish}?topic=t{{ conn.index }}`,
                json: { title: "from user {{ conn.index }}" },
                capture: { item: "$.id" },
              },
            },
            { waitFor: { name: "headline", event: "headline", match: { path: "$.id", equals: "{{ vars.item }}" }, timeout: "5s" } },
            { think: "20ms" },
          ],
        },
      },
      { disconnect: true },
    ];
    const { frames, outcome } = await run({
      ...usersPlan(app.url, steps, { arrivalRate: 5, duration: "1s" }),
      target: { url: app.url, protocol: "sse", connectTimeout: "5s" },
    } as PlanInput);
    expect(outcome.status, outcome.error).toBe("completed");
    const stats = app.stats() as SseNewsStats;
    expect(total(frames, COUNTERS.usersCompleted)).toBe(5);
    expect(stats.streams).toBe(5);
    expect(stats.publishes).toBe(10);
    // Each stream its own topic: every item reached exactly its publisher, who waited for it.
    expect(stats.eventsDelivered).toBe(10);
    expect(histogramCount(frames, "step.headline")).toBe(10);
    expect(histogramCount(frames, "step.publish")).toBe(10);
  });
});

describe("connection scenarios when the server drops connections", { timeout: 60_000 }, () => {
  it("connection scenarios: the slots a dropped connection will never send are counted (messages.unsent), not skipped", async () => {
    const app = await shop({ dropAfterMs: 300 });
    const { frames, outcome } = await run({
      name: "shop connections",
      target: { url: app.url, protocol: "ws", connectTimeout: "5s" },
      connections: { count: 5, rate: 1000 },
      scenario: { kind: "echo", duration: "1s", message: { rate: 10, timeout: "2s" } },
      flow: {
        setup: [ORDER_AND_CANCEL[0], ORDER_AND_CANCEL[1]],
        messages: [{ json: { type: "order", item: "tea", qty: 1 }, reply: { match: { path: "$.type", equals: "order.created" } } }],
      },
    } as PlanInput);
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    const unsent = total(frames, COUNTERS.unsent);
    // Each connection planned 10 in its second; the shop closed it after ~300 ms.
    expect(outcome.totals.expected).toBe(50);
    expect(unsent).toBeGreaterThan(20);
    expect(sent + unsent).toBe(50);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(5);
    expect(app.stats().ordersCreated).toBe(total(frames, COUNTERS.received));
  });

  it("connection scenarios with connections.reconnect: a dropped connection logs in and reconnects, its schedule goes on, the gap is unsent", async () => {
    const app = await shop({ dropAfterMs: 400 });
    const { frames, outcome } = await run({
      name: "shop connections reconnecting",
      target: { url: app.url, protocol: "ws", connectTimeout: "5s" },
      connections: { count: 5, rate: 1000, reconnect: { policy: "backoff", delay: "50ms" } },
      scenario: { kind: "echo", duration: "1500ms", message: { rate: 10, timeout: "2s" } },
      flow: {
        setup: [ORDER_AND_CANCEL[0], ORDER_AND_CANCEL[1]],
        messages: [{ json: { type: "order", item: "tea", qty: 1 }, reply: { match: { path: "$.type", equals: "order.created" } } }],
      },
    } as PlanInput);
    expect(outcome.status).toBe("completed");
    const stats = app.stats();
    const reconnected = total(frames, COUNTERS.reconnects);
    expect(reconnected).toBeGreaterThanOrEqual(5);
    expect(total(frames, COUNTERS.connectionsOpened)).toBe(5);
    // Every reconnect ran the setup again (log-in, then the socket with the new token).
    expect(stats.connections).toBe(5 + reconnected);
    expect(stats.logins).toBe(5 + reconnected);
    expect(histogramCount(frames, HISTOGRAMS.reconnectTime)).toBe(reconnected);
    // Nothing planned goes uncounted: sent, or unsent while the connection was down.
    const sent = total(frames, COUNTERS.sent);
    const unsent = total(frames, COUNTERS.unsent);
    expect(sent + unsent).toBe(outcome.totals.expected);
    expect(outcome.totals.expected).toBeGreaterThanOrEqual(74);
    expect(unsent).toBeLessThan(sent);
    expect(stats.ordersCreated).toBe(total(frames, COUNTERS.received));
  });
});
