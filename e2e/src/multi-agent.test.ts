import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Run } from "@volley/contracts";
import { startWsEchoServer, startWsShop, WS_SHOP_PATHS } from "@volley/targets";
import { ECHO_DELAY_MS, expectExactSplitAndMerge, shardedEchoPlan } from "./sharded-run";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";

const AGENTS = 3;

let stack: Stack;
let target: Awaited<ReturnType<typeof startWsEchoServer>>;

beforeAll(async () => {
  target = await startWsEchoServer({ port: 0, delayMs: ECHO_DELAY_MS });
  stack = await startStack({ agents: AGENTS });
});
afterAll(async () => {
  await stack?.stop();
  await target?.close();
});

describe("one plan over three agent processes", () => {
  it("splits the plan exactly, merges counts and percentiles exactly, breaks them down per agent and starts them together", async () => {
    const plan = shardedEchoPlan("e2e three agents", target.url, AGENTS);
    const created = await api<{ id: string }>(stack, "POST", "/api/v1/runs", { plan });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await waitForFinal<Run>(stack, created.body.id, 120_000);
    expect(run.status, `${run.reason}\n${stack.output.slice(-30).join("\n")}`).toBe("passed");
    await expectExactSplitAndMerge(stack, run, plan);

    // Synchronized start: how far apart the agents began.
    const s = run.summary!;
    const start = s.start!;
    expect(start.skewMs).not.toBeNull();
    console.info(
      `three-agent start skew: ${start.skewMs} ms (max late ${start.maxLateMs} ms; saturated intervals ${s.intervals.saturated}, send lag p99 ${s.sendLag.p99} ms)`,
    );
    // Three processes on one 2-core VM with CPU steal: the 10 ms goal is judged only when the
    // agents report they were undisturbed; otherwise a looser bound.
    const undisturbed = s.intervals.saturated === 0 && (s.sendLag.p99 ?? 0) < 10;
    expect(start.skewMs!).toBeLessThan(undisturbed ? 10 : 50);
  });

  it("runs virtual users across the agents: every arrival logs in, orders and cancels once, and the shop's own counters equal the run's", async () => {
    const shop = await startWsShop();
    try {
      const plan = {
        name: "e2e users over three agents",
        target: { url: shop.url, protocol: "ws", connectTimeout: "5s" },
        connections: { count: 30 },
        scenario: { kind: "users", arrivalRate: 15, duration: "2s", maxUserTime: "20s" },
        flow: {
          steps: [
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
                json: { type: "order", item: "tea", qty: 1 },
                reply: { match: { path: "$.type", equals: "order.created" } },
                capture: { order: "$.order" },
              },
            },
            { think: { min: "10ms", max: "50ms" } },
            {
              send: {
                name: "cancel",
                json: { type: "cancel", orderId: "{{ vars.order.id }}" },
                reply: { match: { path: "$.orderId", equals: "{{ vars.order.id }}" } },
              },
            },
            { disconnect: true },
          ],
        },
        agents: { count: AGENTS },
      };
      const created = await api<{ id: string }>(stack, "POST", "/api/v1/runs", { plan });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const run = await waitForFinal<Run>(stack, created.body.id, 120_000);
      expect(run.status, `${run.reason}\n${stack.output.slice(-30).join("\n")}`).toBe("passed");
      const s = run.summary!;
      // 15 arrivals a second for 2 s, split over the agents: exactly 30 users, each once.
      expect(s.users).toMatchObject({ started: 30, completed: 30, failed: 0, dropped: 0 });
      expect(s.users!.steps.map((st) => [st.step, st.count, st.failed])).toEqual(
        expect.arrayContaining([
          ["login", 30, 0],
          ["order", 30, 0],
          ["cancel", 30, 0],
        ]),
      );
      const stats = shop.stats();
      expect(stats).toMatchObject({ logins: 30, connections: 30, ordersCreated: 30, ordersCancelled: 30, errors: 0 });
      expect(s.messages).toMatchObject({ sent: 60, received: 60, lost: 0 });
      expect(new Set(s.start?.shards.map((sh) => sh.agentId)).size).toBe(AGENTS);
    } finally {
      await shop.close();
    }
  });
});
