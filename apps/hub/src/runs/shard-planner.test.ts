import { describe, expect, it } from "vitest";
import { flowRows, planSchema, type Plan } from "@volley/contracts";
import { planShards, splitProportionally } from "./shard-planner";
import { testPlan } from "../test-support/fixtures";

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("shard planning", () => {
  it("splits connections exactly, remainders to the first shards", () => {
    const shards = planShards(testPlan({ connections: { count: 1001, rate: 250 }, agents: { count: 7 } }));
    const counts = shards.map((s) => s.connections.count);
    expect(counts).toEqual([143, 143, 143, 143, 143, 143, 143]);
    const awkward = planShards(testPlan({ connections: { count: 1000, rate: 250 }, agents: { count: 7 } }));
    expect(awkward.map((s) => s.connections.count)).toEqual([143, 143, 143, 143, 143, 143, 142]);
    expect(sum(awkward.map((s) => s.connections.count))).toBe(1000);
    // Every shard ramps over the same time: its rate is proportional to its connections.
    for (const s of awkward) expect(s.connections.count / s.connections.rate).toBeCloseTo(1000 / 250, 9);
    expect(sum(awkward.map((s) => s.connections.rate))).toBeCloseTo(250, 9);
  });

  it("splits an aggregate message rate exactly and keeps per-connection rates", () => {
    const agg = planShards(testPlan({ connections: { count: 10 }, message: { rate: 1000, per: "aggregate" }, agents: { count: 3 } }));
    expect(agg.map((s) => s.scenario.message.rate)).toEqual([400, 300, 300]);
    const odd = planShards(testPlan({ connections: { count: 7 }, message: { rate: 100, per: "aggregate" }, agents: { count: 3 } }));
    expect(sum(odd.map((s) => s.scenario.message.rate))).toBe(100);
    expect(odd.map((s) => s.scenario.message.rate)).toEqual([43, 29, 28]);
    const perConn = planShards(testPlan({ connections: { count: 7 }, message: { rate: 17, per: "connection" }, agents: { count: 3 } }));
    expect(perConn.map((s) => s.scenario.message.rate)).toEqual([17, 17, 17]);
  });

  it("splits stage targets and an aggregate sweep so the shards add up to the plan at every stage and step", () => {
    const base = testPlan({ connections: { count: 10 }, message: { rate: 100, per: "aggregate" }, agents: { count: 3 } });
    const staged = planShards({
      ...base,
      connections: {
        ...base.connections,
        stages: [
          { duration: "10s", target: 10 },
          { duration: "5s", target: 5 },
          { duration: "5s", target: 0 },
        ],
      },
    });
    for (const [k, total] of [10, 5, 0].entries()) expect(sum(staged.map((s) => s.connections.stages![k]!.target))).toBe(total);
    for (const s of staged) for (const st of s.connections.stages!) expect(st.target).toBeLessThanOrEqual(s.connections.count);
    const swept = planShards({ ...base, sweep: { from: 100, step: 50, until: 300, steps: 20, hold: "3s", gap: "1s" } });
    expect(sum(swept.map((s) => s.sweep!.from!))).toBe(100);
    expect(sum(swept.map((s) => s.sweep!.step))).toBe(50);
    // until 300 from 100 by 50 is 5 steps: every shard stops after the same step.
    expect(swept.map((s) => [s.sweep!.steps, s.sweep!.until])).toEqual([
      [5, undefined],
      [5, undefined],
      [5, undefined],
    ]);
    for (let k = 0; k < 5; k++) expect(sum(swept.map((s) => s.sweep!.from! + k * s.sweep!.step))).toBe(100 + k * 50);
  });

  it("splits small and fractional aggregate rates in finer steps so every shard sends", () => {
    const small = planShards(testPlan({ connections: { count: 9 }, message: { rate: 2, per: "aggregate" }, agents: { count: 3 } }));
    const rates = small.map((s) => s.scenario.message.rate);
    expect(rates.every((r) => r > 0)).toBe(true);
    expect(sum(rates.map((r) => Math.round(r * 1000)))).toBe(2000);
    const frac = planShards(testPlan({ connections: { count: 5 }, message: { rate: 0.7, per: "aggregate" }, agents: { count: 4 } }));
    expect(sum(frac.map((s) => Math.round(s.scenario.message.rate * 1000)))).toBe(700);
  });

  it("never plans a shard without connections", () => {
    const shards = planShards(testPlan({ connections: { count: 2 }, agents: { count: 5 } }));
    expect(shards.map((s) => s.connections.count)).toEqual([1, 1]);
  });

  it("splits by capacity weights: 2:1 capacity gives a 2:1 split of connections and of every rate, summing exactly", () => {
    const base = testPlan({ connections: { count: 300, rate: 90 }, message: { rate: 600, per: "aggregate" }, agents: { count: 2 } });
    const shards = planShards(base, [20_000, 10_000]);
    expect(shards.map((s) => s.connections.count)).toEqual([200, 100]);
    expect(shards.map((s) => s.connections.rate)).toEqual([60, 30]);
    expect(shards.map((s) => s.scenario.message.rate)).toEqual([400, 200]);
    const staged = planShards(
      {
        ...base,
        connections: {
          ...base.connections,
          stages: [
            { duration: "5s", target: 300 },
            { duration: "5s", target: 31 },
            { duration: "5s", target: 0 },
          ],
        },
      },
      [20_000, 10_000],
    );
    expect(staged.map((s) => s.connections.stages!.map((st) => st.target))).toEqual([
      [200, 21, 0],
      [100, 10, 0],
    ]);
    const swept = planShards({ ...base, sweep: { from: 300, step: 150, until: 900, steps: 20, hold: "3s", gap: "1s" } }, [20_000, 10_000]);
    expect(swept.map((s) => [s.sweep!.from, s.sweep!.step])).toEqual([
      [200, 100],
      [100, 50],
    ]);
    for (let k = 0; k < swept[0]!.sweep!.steps; k++) expect(sum(swept.map((s) => s.sweep!.from! + k * s.sweep!.step))).toBe(300 + k * 150);
  });

  it("sums exactly to the plan for awkward weights, at every stage and sweep step", () => {
    const base = testPlan({ connections: { count: 1001, rate: 97 }, message: { rate: 333, per: "aggregate" }, agents: { count: 4 } });
    const weights = [7_000, 3_000, 3_000, 1_500];
    const plan = {
      ...base,
      connections: {
        ...base.connections,
        stages: [
          { duration: "5s", target: 1001 },
          { duration: "5s", target: 17 },
        ],
      },
      sweep: { from: 101, step: 7, until: 200, steps: 20, hold: "3s", gap: "1s" },
    };
    const shards = planShards(plan, weights);
    expect(sum(shards.map((s) => s.connections.count))).toBe(1001);
    expect(sum(shards.map((s) => s.connections.rate))).toBeCloseTo(97, 9);
    expect(sum(shards.map((s) => s.scenario.message.rate))).toBe(333);
    for (const [k, total] of [1001, 17].entries()) expect(sum(shards.map((s) => s.connections.stages![k]!.target))).toBe(total);
    for (let k = 0; k < shards[0]!.sweep!.steps; k++) expect(sum(shards.map((s) => s.sweep!.from! + k * s.sweep!.step))).toBe(101 + k * 7);
    // In proportion to the weights, to within one connection.
    for (const [i, s] of shards.entries()) expect(Math.abs(s.connections.count - (1001 * weights[i]!) / sum(weights))).toBeLessThan(1);
  });

  it("gives a tiny weight one connection of its own, and keeps the first weights when connections are fewer", () => {
    expect(planShards(testPlan({ connections: { count: 10 } }), [1_000, 1]).map((s) => s.connections.count)).toEqual([9, 1]);
    expect(planShards(testPlan({ connections: { count: 2 } }), [30, 20, 10]).map((s) => s.connections.count)).toEqual([1, 1]);
    expect(() => planShards(testPlan(), [])).toThrow(/positive/);
    expect(() => planShards(testPlan({ agents: { count: "all" } }))).toThrow(/weights/);
  });

  it("gives flow shards their run-wide connection index and, without reuse, rows of their own", () => {
    const users = Array.from({ length: 9 }, (_, k) => `user${k}`);
    const plan = flowPlan(7, { csv: `user,pass\n${users.map((u) => `${u},pw-${u}`).join("\n")}` });
    const shards = planShards(plan, [3, 2, 2]);
    expect(shards.map((s) => [s.connections.count, s.flow!.indexBase])).toEqual([
      [3, 0],
      [2, 3],
      [2, 5],
    ]);
    const used: string[] = [];
    for (const shard of shards) {
      // What an agent receives: rows (the CSV parsed once, by the hub), a plan it validates as it is.
      expect(shard.flow!.data!.csv).toBeUndefined();
      expect(() => planSchema.parse(shard)).not.toThrow();
      const rows = flowRows(shard.flow!.data);
      expect(rows).toHaveLength(shard.connections.count);
      // The agent's pick (flow-shard.ts): row = rows[(indexBase + id) % rows.length].
      for (let id = 0; id < shard.connections.count; id++) {
        const k = shard.flow!.indexBase! + id;
        const row = rows[k % rows.length]!;
        expect(row).toEqual({ user: users[k], pass: `pw-${users[k]}` });
        used.push(row.user as string);
      }
    }
    // Every connection of the run has its own row: none used twice across agents.
    expect(used).toEqual(users.slice(0, 7));
  });

  it("gives every flow shard all rows with reuse, its connection index doing the rotation", () => {
    const rows = [{ user: "ann" }, { user: "bob" }];
    const shards = planShards(flowPlan(5, { rows, reuse: true }), [1, 1]);
    expect(shards.map((s) => [s.flow!.indexBase, s.flow!.data!.rows])).toEqual([
      [0, rows],
      [3, rows],
    ]);
    const picks = shards.flatMap((s) =>
      Array.from({ length: s.connections.count }, (_, id) => s.flow!.data!.rows![(s.flow!.indexBase! + id) % rows.length]!.user),
    );
    expect(picks).toEqual(["ann", "bob", "ann", "bob", "ann"]);
    // A flow without data still gets the index base; a plan without a flow gets no flow.
    expect(planShards(flowPlan(4), [1, 1]).map((s) => s.flow!.indexBase)).toEqual([0, 2]);
    expect(planShards(testPlan({ agents: { count: 2 } })).every((s) => s.flow === undefined)).toBe(true);
  });

  it("largest remainder split is exact for any weights", () => {
    expect(splitProportionally(10, [1, 1, 1])).toEqual([4, 3, 3]);
    expect(splitProportionally(1, [3, 3, 3, 1])).toEqual([1, 0, 0, 0]);
    expect(sum(splitProportionally(99_999, [5, 7, 11, 13]))).toBe(99_999);
  });
});

function flowPlan(count: number, data?: { rows?: Record<string, string>[]; csv?: string; reuse?: boolean }): Plan {
  const base = testPlan({ connections: { count } });
  return planSchema.parse({
    ...base,
    target: { url: "ws://127.0.0.1:9/rpc", protocol: "ws" },
    flow: {
      ...(data ? { data } : {}),
      messages: [
        {
          json: { method: "echo", params: [data ? "{{ data.user }}" : "{{ conn.index }}"], id: "{{ msg.id }}" },
          reply: { match: { path: "$.id", equals: "{{ msg.id }}" } },
        },
      ],
    },
  });
}
