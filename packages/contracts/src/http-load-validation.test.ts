import { describe, expect, it } from "vitest";
import { planSchema, type PlanInput } from "./plan";
import { planShards } from "./shard-split";

const base = (scenario: Record<string, unknown>, extra: Partial<PlanInput> = {}): PlanInput => ({
  name: "http",
  target: { url: "http://127.0.0.1:9005/echo", protocol: "http" },
  connections: { count: 10 },
  scenario: { kind: "http-rps", message: { rate: 100 }, duration: "10s", ...scenario } as PlanInput["scenario"],
  ...extra,
});

function issues(plan: PlanInput): { path: string; message: string }[] {
  const r = planSchema.safeParse(plan);
  return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
}

describe("http-rps loop, thinkTime and requests", () => {
  it("defaults to an open loop without an exact count", () => {
    const plan = planSchema.parse(base({}));
    expect(plan.scenario).toMatchObject({ kind: "http-rps", loop: "open", thinkTime: 0 });
    expect(plan.scenario.kind === "http-rps" && plan.scenario.requests).toBeUndefined();
  });

  it("accepts a closed loop with think time and an exact count", () => {
    expect(issues(base({ loop: "closed", thinkTime: "100ms", requests: 5000 }))).toEqual([]);
  });

  it("an exact count the open loop cannot send within duration names the duration it needs", () => {
    expect(issues(base({ requests: 5000, message: { rate: 100, arrival: "constant" } }))).toEqual([
      {
        path: "scenario.requests",
        message: "at 100 requests/s, 5,000 requests need about 50s of sending but duration is 10s: set duration: 50s or more, or raise message.rate",
      },
    ]);
    // Poisson leaves a tenth more and a second: 1,000 at 100/s need 12 s.
    expect(issues(base({ requests: 1000 }))[0]).toMatchObject({ path: "scenario.requests", message: expect.stringContaining("set duration: 12s or more") });
    expect(issues(base({ requests: 1000 }, { connections: { count: 10 } }))).toHaveLength(1);
    // per: connection multiplies by the connections: 10 × 100/s sends 1,000 in a second.
    expect(issues(base({ requests: 1000, message: { rate: 100, per: "connection", arrival: "constant" } }))).toEqual([]);
  });

  it("refuses what the engine cannot honour, naming the field and the fix", () => {
    expect(issues(base({ thinkTime: "1s" }))).toEqual([{ path: "scenario.thinkTime", message: expect.stringMatching(/set loop: closed/) }]);
    expect(issues(base({ loop: "closed" }, { sweep: { step: 10 } }))).toContainEqual({ path: "scenario.loop", message: expect.stringMatching(/remove sweep/) });
    expect(issues(base({ requests: 10 }, { sweep: { step: 10 } }))).toContainEqual({
      path: "scenario.requests",
      message: expect.stringMatching(/remove requests/),
    });
    expect(issues(base({ loop: "closed" }, { connections: { count: 10, stages: [{ duration: "5s", target: 10 }] } }))).toContainEqual({
      path: "scenario.loop",
      message: expect.stringMatching(/remove connections.stages/),
    });
    expect(issues(base({ loop: "sometimes" }))[0]?.path).toBe("scenario.loop");
  });

  it("keepAlive: false with pipelining is refused on target.http.pipelining", () => {
    const plan = base({});
    expect(issues({ ...plan, target: { ...plan.target, http: { keepAlive: false, pipelining: 4 } } })).toEqual([
      { path: "target.http.pipelining", message: "pipelining needs a kept-alive connection: set pipelining: 1 with keepAlive: false, or keepAlive: true" },
    ]);
  });

  it("an exact count splits across agents (and an agent's threads) to the request, like the connections", () => {
    const plan = planSchema.parse(base({ requests: 1001, message: { rate: 1000, arrival: "constant" } }, { connections: { count: 10 }, agents: { count: 3 } }));
    const shards = planShards(plan, [3, 2, 1]);
    const shares = shards.map((p) => (p.scenario.kind === "http-rps" ? p.scenario.requests : undefined));
    // Connections split 5 / 3 / 2 for weights 3:2:1, and the requests with them.
    expect(shares).toEqual([501, 300, 200]);
    expect(issues(base({ requests: 2 }, { agents: { count: 3 } }))).toContainEqual({
      path: "scenario.requests",
      message: "is split across the 3 agents: send at least one per agent (requests: 3), or lower agents.count",
    });
  });
});
