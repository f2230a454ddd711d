import { describe, expect, it } from "vitest";
import { planSchema } from "./plan";
import { planTiming } from "./plan-timing";
import { planShards } from "./shard-split";
import { sweepPlanError } from "./sweep-validation";

const STEPS = [{ request: { method: "POST", url: "/api/todos", json: { title: "t" } } }];

const users = (scenario: Record<string, unknown> = {}, sweep: Record<string, unknown> = {}) => ({
  name: "users sweep",
  target: { url: "http://127.0.0.1:8080", protocol: "http" },
  connections: { count: 100 },
  scenario: { kind: "users", arrivalRate: 10, duration: "30s", maxUserTime: "5s", ...scenario },
  flow: { steps: STEPS },
  sweep: { step: 10, hold: "2s", gap: "1s", stopWhen: { p95: "200ms", usersFailedRate: 1 }, ...sweep },
});

const issues = (input: unknown) => {
  const r = planSchema.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("a sweep of users' arrival rate", () => {
  it("steps scenario.arrivalRate from the start instant: steps fit in duration, arrivals end with the last hold, maxUserTime drains", () => {
    const plan = planSchema.parse(users({}, { steps: 20 }));
    const t = planTiming(plan);
    // 30 s of 3 s slots (2 s hold + 1 s gap): 10 slots, the last hold ending at 9·3 + 2 = 29 s.
    expect(t.sweep).toMatchObject({ holdMs: 2000, periodMs: 3000, slots: 10, rates: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100] });
    expect(t.sendEndMs).toBe(29_000);
    expect(t.endByMs).toBe(34_000);
  });

  it("sweep.from may start it where arrivalRate is 0; the first step's rate is then required somewhere", () => {
    expect(issues(users({ arrivalRate: 0 }, { from: 5 }))).toEqual([]);
    expect(planTiming(planSchema.parse(users({ arrivalRate: 0 }, { from: 5, steps: 3 }))).sweep!.rates).toEqual([5, 15, 25]);
    expect(issues(users({ arrivalRate: 0 }))).toEqual(["scenario.arrivalRate: must be above 0 (users per second), or ramp it up with stages"]);
  });

  it("refuses stages with a sweep, and usersFailedRate outside users, naming the field and the fix", () => {
    expect(issues(users({ stages: [{ duration: "10s", target: 50 }] }))).toEqual([
      "sweep: steps the arrival rate itself: remove scenario.stages, or remove sweep and ramp with the stages",
    ]);
    const echo = {
      name: "echo",
      target: { url: "ws://127.0.0.1:8080", protocol: "ws" },
      connections: { count: 10 },
      scenario: { kind: "echo", duration: "10s", message: { rate: 10, per: "aggregate" } },
      sweep: { step: 10, stopWhen: { usersFailedRate: 1 } },
    };
    expect(issues(echo)).toEqual([
      "sweep.stopWhen.usersFailedRate: judges users (scenario.kind: users): use lossRate or errorRate for a connection scenario's messages",
    ]);
    expect(sweepPlanError({ ...planSchema.parse(users()), sweep: { ...planSchema.parse(users()).sweep!, until: 5 } })).toEqual({
      path: ["sweep", "until"],
      message: "is 5, below the first step's rate (10, scenario.arrivalRate), so no step runs; raise until or set sweep.from below it",
    });
  });

  it("splits each step's arrival rate across agents, summing to the plan's, every shard stopping at the same step", () => {
    const plan = planSchema.parse(users({ arrivalRate: 30 }, { from: 30, step: 15, until: 90, steps: 20 }));
    const shards = planShards(plan, [2, 1]);
    expect(shards.map((s) => [s.scenario.kind === "users" && s.scenario.arrivalRate, s.sweep!.from, s.sweep!.step, s.sweep!.steps])).toEqual([
      [20, 20, 10, 5],
      [10, 10, 5, 5],
    ]);
    const rates = shards.map((s) => planTiming(s).sweep!.rates);
    expect(rates[0]!.map((r, k) => r + rates[1]![k]!)).toEqual([30, 45, 60, 75, 90]);
  });
});
