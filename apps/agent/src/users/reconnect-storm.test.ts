import { afterEach, describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { RunTally, summarizeRun } from "@volley/metrics";
import { startWsShop, WS_SHOP_PATHS, type WsShop } from "@volley/targets";
import { runShard } from "../engine/run-shard";
import type { EngineFrame } from "../engine/types";

const apps: WsShop[] = [];
const timers: NodeJS.Timeout[] = [];
afterEach(async () => {
  for (const t of timers.splice(0)) clearTimeout(t);
  for (const a of apps.splice(0)) await a.close();
});

const USERS = 40;

describe("reconnect storms", { timeout: 60_000 }, () => {
  it("the shop restarts and drops every user at once: the storm's dropped and reconnected are the shop's own counts, its times match when the shop saw them back", async () => {
    const shop = await startWsShop();
    apps.push(shop);
    // 40 users log in, connect (reconnecting after 0.5–1.5 s: 1 s ± 50 %), hold the socket 4 s and leave.
    // A reconnect of 1 s ± 50 % lands after the end of the restart's second for about half of them at least.
    const plan = planSchema.parse({
      name: "shop restart",
      target: { url: shop.url, protocol: "ws", connectTimeout: "5s" },
      connections: { count: USERS },
      scenario: { kind: "users", arrivalRate: 100, duration: "400ms", maxUserTime: "20s" },
      flow: {
        steps: [
          {
            request: {
              name: "login",
              method: "POST",
              url: `${shop.httpUrl}${WS_SHOP_PATHS.login}`,
              json: { user: "u{{ conn.index }}", password: "secret" },
              capture: { token: "$.token" },
            },
          },
          { connect: { query: { token: "{{ vars.token }}" }, reconnect: { policy: "backoff", delay: "1s", maxDelay: "5s", jitter: 0.5, maxAttempts: 5 } } },
          { think: "4s" },
          { disconnect: true },
        ],
      },
    });
    // The shop's side: when it restarted, and when it had each share of the users back (its own connection count).
    let restartAt = 0;
    let dropped = 0;
    const backAt = new Map<number, number>();
    const watch = () => {
      const back = shop.stats().connections - USERS;
      for (const share of [0.5, 0.9]) if (!backAt.has(share) && back >= Math.ceil(share * USERS)) backAt.set(share, performance.now() - restartAt);
      if (backAt.size < 2) timers.push(setTimeout(watch, 2));
    };
    // The restart comes once every user is connected, and after the run's first second.
    const began = performance.now();
    const restartWhenAllIn = () => {
      if (shop.stats().connections < USERS || performance.now() - began < 1300) return void timers.push(setTimeout(restartWhenAllIn, 5));
      restartAt = performance.now();
      dropped = shop.restart();
      watch();
    };
    restartWhenAllIn();
    const frames: EngineFrame[] = [];
    const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
    expect(outcome.status).toBe("completed");
    expect(dropped).toBe(USERS);

    const summary = summarizeRun(frames, [], plan);
    const storms = summary.reconnectStorms!;
    expect(storms).toHaveLength(1);
    const storm = storms[0]!;
    const stats = shop.stats();
    expect(storm).toMatchObject({ seconds: 1, dropped: stats.drops, connectedBefore: USERS, failed: 0 });
    // Every reconnect Volley counted is a socket the shop opened again.
    expect(storm.reconnected).toBe(stats.connections - USERS);
    expect(storm.reconnected).toBe(USERS);
    const { p50, p90, p99 } = storm.back;
    expect(p50).toBeGreaterThanOrEqual(500);
    expect(p50!).toBeLessThanOrEqual(p90!);
    expect(p90!).toBeLessThanOrEqual(p99!);
    expect(p99).toBeLessThan(2000);
    // Each drop timed to its own reconnect agrees with when the shop saw that share of users back:
    // the shop's clock starts at its restart, a user's when the close reached it (later, by how long
    // the close handshake took to be read: up to ~160 ms seen with this process sharing 2 loaded
    // cores), and both end within a round trip of each other.
    for (const [share, volley] of [
      [0.5, p50!],
      [0.9, p90!],
    ] as const) {
      const late = backAt.get(share)! - volley;
      expect(late).toBeGreaterThan(-20);
      expect(late).toBeLessThan(300);
    }
    // Open sockets by second: all 40, fewer at the end of the restart's second, all back, then none (they left).
    expect(storm.connected[0]).toBeLessThan(USERS);
    expect(storm.connectedLowest).toBe(storm.connected[0]);
    expect(storm.connected.slice(1)).toContain(USERS);
    expect(storm.connected.at(-1)).toBe(0);

    // The hub's run meter, frame by frame, reads the same storms.
    const tally = new RunTally();
    for (const f of frames) tally.add({ ...f, agentId: "a", shardId: "s" });
    expect(tally.summary([], plan).reconnectStorms).toEqual(storms);
  });

  it("connection scenarios with connections.reconnect: the storm's drops and reconnects are the shop's, and every connection is open again", async () => {
    const shop = await startWsShop();
    apps.push(shop);
    const N = 10;
    const plan = planSchema.parse({
      name: "shop connections, restart",
      target: { url: shop.url, protocol: "ws", connectTimeout: "5s" },
      connections: { count: N, rate: 1000, reconnect: { policy: "backoff", delay: "300ms", jitter: 0.5 } },
      scenario: { kind: "echo", duration: "3s", message: { rate: 2, timeout: "2s" } },
      flow: {
        setup: [
          {
            request: {
              method: "POST",
              url: `${shop.httpUrl}${WS_SHOP_PATHS.login}`,
              json: { user: "c{{ conn.index }}", password: "secret" },
              capture: { token: "$.token" },
            },
          },
          { connect: { query: { token: "{{ vars.token }}" } } },
        ],
        messages: [{ json: { type: "order", item: "tea", qty: 1 }, reply: { match: { path: "$.type", equals: "order.created" } } }],
      },
    });
    const began = performance.now();
    const restartLater = () => {
      if (shop.stats().connections < N || performance.now() - began < 1300) return void timers.push(setTimeout(restartLater, 5));
      shop.restart();
    };
    restartLater();
    const frames: EngineFrame[] = [];
    await runShard(plan, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
    const storms = summarizeRun(frames, [], plan).reconnectStorms!;
    const stats = shop.stats();
    expect(storms).toHaveLength(1);
    expect(storms[0]).toMatchObject({ dropped: stats.drops, reconnected: stats.connections - N, connectedBefore: N, failed: 0 });
    expect(stats.drops).toBe(N);
    // Counted as reconnected (not opened again), they are open again: back to N before the run closes them.
    expect(storms[0]!.connected).toContain(N);
    expect(storms[0]!.back.p99).not.toBeNull();
  });

  it("a run whose users never reconnect has no storms", async () => {
    const shop = await startWsShop();
    apps.push(shop);
    const frames: EngineFrame[] = [];
    const plan = planSchema.parse({
      name: "shop, no reconnect",
      target: { url: shop.url, protocol: "ws", connectTimeout: "5s" },
      connections: { count: 5 },
      scenario: { kind: "users", arrivalRate: 50, duration: "100ms" },
      flow: {
        steps: [
          { request: { method: "POST", url: `${shop.httpUrl}${WS_SHOP_PATHS.login}`, json: { user: "u", password: "secret" }, capture: { token: "$.token" } } },
          { connect: { query: { token: "{{ vars.token }}" } } },
          { think: "200ms" },
          { disconnect: true },
        ],
      },
    });
    await runShard(plan, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
    expect(summarizeRun(frames, [], plan).reconnectStorms).toBeUndefined();
  });
});
