import { describe, expect, it } from "vitest";
import { flowRows, planSchema, planShards, type Plan } from "@volley/contracts";
import { sourceAddressFor } from "../engine/source-addresses";
import { splitAcrossWorkers } from "./worker-split";

function flowPlan(count: number, data?: { rows?: Record<string, string>[]; reuse?: boolean }): Plan {
  return planSchema.parse({
    name: "split",
    target: { url: "ws://127.0.0.1:9/rpc", protocol: "ws" },
    connections: { count, rate: count },
    scenario: { kind: "echo", message: { rate: 10, per: "aggregate" }, duration: "10s" },
    flow: {
      ...(data ? { data } : {}),
      messages: [
        { json: { id: "{{ msg.id }}", user: data ? "{{ data.user }}" : "{{ conn.index }}" }, reply: { match: { path: "$.id", equals: "{{ msg.id }}" } } },
      ],
    },
  });
}

/** What a connection of a (worker's) plan gets, as flow-shard.ts picks it: conn.index and its row. */
function picks(plan: Plan): { index: number; user: unknown }[] {
  const rows = flowRows(plan.flow!.data);
  return Array.from({ length: plan.connections.count }, (_, id) => {
    const index = (plan.flow!.indexBase ?? 0) + id;
    return { index, user: rows.length ? rows[index % rows.length]!.user : undefined };
  });
}

describe("splitting a shard across worker threads", () => {
  it("gives every connection the run-wide index and data row it has with one thread, for a run split across agents and then workers", () => {
    const users = Array.from({ length: 23 }, (_, k) => ({ user: `u${k}` }));
    const plan = flowPlan(23, { rows: users });
    const oneThread = planShards(plan, [2, 1]).flatMap(picks);
    expect(oneThread.map((p) => p.user)).toEqual(users.map((u) => u.user));
    for (const workers of [2, 3, 5]) {
      const shares = planShards(plan, [2, 1]).flatMap((shard, i) => splitAcrossWorkers(shard, workers, `s${i}`));
      expect(
        shares.flatMap((s) => picks(s.plan)),
        `${workers} workers`,
      ).toEqual(oneThread);
      // Without reuse, a worker is sent only its own rows.
      for (const s of shares) expect(flowRows(s.plan.flow!.data)).toHaveLength(s.plan.connections.count);
    }
    // With reuse, every row for everyone, rotated by conn.index as before.
    const reuse = flowPlan(7, { rows: users.slice(0, 3), reuse: true });
    const shares = splitAcrossWorkers(planShards(reuse, [1, 1])[1]!, 2, "s1");
    expect(shares.flatMap((s) => picks(s.plan)).map((p) => p.user)).toEqual(["u1", "u2", "u0"]);
  });

  it("splits connections, ramp and aggregate rate exactly, names each worker's groups apart, and keeps one canary", () => {
    const plan = planSchema.parse({
      name: "storm",
      target: { url: "ws://127.0.0.1:9/echo" },
      connections: { count: 101, rate: 202 },
      scenario: { kind: "storm", message: { rate: 0.5 }, duration: "10s", canary: { rate: 5 } },
    });
    const shares = splitAcrossWorkers(plan, 4, "shard-9");
    expect(shares.map((s) => s.plan.connections.count)).toEqual([26, 25, 25, 25]);
    expect(shares.reduce((n, s) => n + s.plan.connections.rate, 0)).toBeCloseTo(202, 9);
    expect(shares.map((s) => s.base)).toEqual([0, 26, 51, 76]);
    expect(shares.map((s) => s.shard)).toEqual(["shard-9.w0", "shard-9.w1", "shard-9.w2", "shard-9.w3"]);
    expect(shares.map((s) => (s.plan.scenario.kind === "storm" ? s.plan.scenario.canary : null))).toEqual([{ rate: 5 }, false, false, false]);

    const aggregate = planSchema.parse({ ...plan, scenario: { kind: "echo", message: { rate: 1001, per: "aggregate" }, duration: "10s" } });
    const rates = splitAcrossWorkers(aggregate, 3, "s").map((s) => s.plan.scenario.message.rate);
    expect(rates.reduce((a, b) => a + b, 0)).toBe(1001);
  });

  it("shares the source-address pool: each connection binds the address it binds with one thread", () => {
    const addresses = ["127.0.0.2", "127.0.0.3", "127.0.0.4"];
    const plan = planSchema.parse({
      name: "s",
      target: { url: "ws://127.0.0.1:9/echo" },
      connections: { count: 11, rate: 100 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
    });
    const oneThread = Array.from({ length: 11 }, (_, id) => sourceAddressFor(addresses, id).localAddress);
    const shares = splitAcrossWorkers(plan, 2, "s", addresses);
    const bound = shares.flatMap((s) => Array.from({ length: s.plan.connections.count }, (_, id) => sourceAddressFor(s.sourceAddresses, id).localAddress));
    expect(bound).toEqual(oneThread);
  });

  it("keeps a broadcast in one worker, and splits groups in whole groups so none straddles two workers", () => {
    const broadcast = planSchema.parse({
      name: "b",
      target: { url: "ws://127.0.0.1:9/broadcast" },
      connections: { count: 40, rate: 100 },
      scenario: { kind: "broadcast", message: { rate: 1 }, duration: "5s" },
    });
    expect(splitAcrossWorkers(broadcast, 4, "s")).toHaveLength(1);
    const groups = (count: number) =>
      planSchema.parse({
        name: "g",
        target: { url: "ws://127.0.0.1:9/group" },
        connections: { count, rate: 100 },
        scenario: { kind: "groups", size: 5, message: { rate: 1 }, duration: "5s" },
      });
    expect(splitAcrossWorkers(groups(22), 2, "s").map((s) => [s.base, s.plan.connections.count])).toEqual([
      [0, 15],
      [15, 7],
    ]);
    expect(splitAcrossWorkers(groups(40), 3, "s").map((s) => s.plan.connections.count)).toEqual([15, 15, 10]);
    expect(splitAcrossWorkers(groups(8), 4, "s").map((s) => s.plan.connections.count)).toEqual([5, 3]);
    const rates = splitAcrossWorkers(
      planSchema.parse({ ...groups(22), scenario: { kind: "groups", size: 5, message: { rate: 22, per: "aggregate" }, duration: "5s" } }),
      2,
      "s",
    );
    expect(rates.map((s) => s.plan.scenario.message.rate)).toEqual([15, 7]);
  });

  it("keeps a sweep, and a plan with fewer connections than workers, in as many workers as it can use", () => {
    const sweep = planSchema.parse({
      name: "sweep",
      target: { url: "ws://127.0.0.1:9/echo" },
      connections: { count: 10, rate: 100 },
      scenario: { kind: "echo", message: { rate: 10, per: "aggregate" }, duration: "60s" },
      sweep: { step: 10, hold: "5s" },
    });
    expect(splitAcrossWorkers(sweep, 4, "s")).toEqual([{ plan: sweep, shard: "s", sourceAddresses: [], base: 0 }]);
    const tiny = planSchema.parse({ ...sweep, sweep: undefined, connections: { count: 2, rate: 10 } });
    expect(splitAcrossWorkers(tiny, 8, "s").map((s) => s.plan.connections.count)).toEqual([1, 1]);
  });
});
