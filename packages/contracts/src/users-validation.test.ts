import { describe, expect, it } from "vitest";
import { planJsonSchema } from "./plan-json-schema";
import { planSchema } from "./plan";
import { planShards } from "./shard-split";
import { planTiming } from "./plan-timing";
import { compileValue } from "./flow-template";

const users = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name: "users",
  target: { url: "ws://127.0.0.1:8080/shop", protocol: "ws" },
  connections: { count: 100 },
  scenario: { kind: "users", arrivalRate: 10, duration: "30s" },
  flow: { steps },
  ...extra,
});

const issues = (input: unknown) => {
  const r = planSchema.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

const ORDER = {
  send: { name: "order", json: { type: "order" }, reply: { match: { path: "$.type", equals: "order.created" } }, capture: { order: "$.order" } },
};

describe("users plans", () => {
  it("accepts a user's steps with loops, choices, conditions, random data and nested captures", () => {
    const plan = users([
      { request: { method: "POST", url: "/api/login", json: { user: "u{{ conn.index }}" }, capture: { token: "$.token" } } },
      { connect: { query: { token: "{{ vars.token }}" } } },
      { loop: { count: 3, steps: [ORDER, { think: { min: "1s", max: "3s" } }] } },
      {
        choice: [
          { weight: 3, steps: [{ send: { json: { type: "cancel", orderId: "{{ vars.order.id }}", qty: "{{ random.int(1, 150) }}" } } }] },
          { steps: [] },
        ],
      },
      { if: { var: "vars.order.status", equals: "open" }, steps: [{ think: { mean: "2s", distribution: "exponential" } }], else: [{ disconnect: true }] },
    ]);
    expect(issues(plan)).toEqual([]);
  });

  it("names the step and the fix for what cannot run", () => {
    const found = issues(
      users([
        { connect: {} },
        { loop: { steps: [{ think: "1s" }] } },
        { send: { json: { id: "{{ vars.nope.id }}" }, capture: { x: "$.x" } } },
        { send: { json: { n: "{{ random.int(9, 1) }}" } } },
        { think: { min: "3s", max: "1s" } },
        { choice: [{ weight: 0, steps: [] }] },
        { if: { var: "vars.later" }, steps: [] },
      ]),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        "flow.steps.1.loop: a loop needs an end: count (like count: 3), over (a duration, like over: 30s) or while (a condition, like while: { var: vars.total, below: 3 })",
        expect.stringMatching(/^flow\.steps\.2\.send\.json\.id: \{\{ vars\.nope\.id \}\} is not captured before this point/),
        expect.stringMatching(/^flow\.steps\.2\.send\.capture: a send captures from its reply/),
        "flow.steps.3.send.json.n: random.int takes a range min ≤ max, like {{ random.int(1, 150) }}",
        "flow.steps.4.think.max: must be at least min (3s)",
        expect.stringMatching(/^flow\.steps\.5\.choice\.0\.weight: must be above 0/),
        expect.stringMatching(/^flow\.steps\.6\.if\.var: vars\.later is not captured before this step/),
      ]),
    );
  });

  it("conditions compare (one comparison each, a regular expression that compiles) and loops may repeat while one holds", () => {
    const COUNT = { send: { name: "count", json: { type: "count" }, reply: { match: { path: "$.type" } }, capture: { total: "$.total" } } };
    const steps = [
      { connect: {} },
      COUNT,
      { loop: { while: { var: "vars.total", below: 3 }, steps: [COUNT] } },
      { loop: { while: { var: "vars.status", notEquals: "done" }, steps: [{ ...COUNT, send: { ...COUNT.send, capture: { status: "$.s" } } }] } },
      { loop: { count: 2, while: { var: "data.plan", in: ["pro", "team"] }, steps: [{ think: "1s" }] } },
      { if: { var: "vars.total", atLeast: 3 }, steps: [], else: [] },
      { if: { var: "vars.total", matches: "^\\d+$" }, steps: [] },
    ];
    const plan = users(steps, { flow: { data: { rows: [{ plan: "pro" }], reuse: true }, steps } });
    expect(issues(plan)).toEqual([]);

    const found = issues({
      ...plan,
      flow: {
        ...plan.flow,
        steps: [
          { connect: {} },
          COUNT,
          { if: { var: "vars.total", above: 1, below: 5 }, steps: [] },
          { if: { var: "vars.total", matches: "([a-z" }, steps: [] },
          { loop: { name: "poll", while: { var: "data.plan", equals: "pro" }, steps: [{ think: "1s" }] } },
          { loop: { while: { var: "vars.total", below: 3 }, steps: [{ send: { json: { type: "count" } } }] } },
          { loop: { while: { var: "vars.later", below: 3 }, steps: [{ ...COUNT, send: { ...COUNT.send, capture: { later: "$.total" } } }] } },
          { loop: { while: { var: "vars.never", atMost: 3 }, count: 3, steps: [{ think: "1s" }] } },
        ],
      },
    });
    expect(found).toEqual([
      "flow.steps.2.if.below: a condition makes one comparison (this one has above and below): keep one, and nest an if for the other",
      expect.stringMatching(/^flow\.steps\.3\.if\.matches: is not a regular expression \(.+\): write it in JavaScript syntax/),
      'flow.steps.4.loop.while.var: loop "poll" would never end: data.plan cannot change inside it (a data column is the same on every pass): capture the variable inside the loop, or add count or over',
      'flow.steps.5.loop.while.var: loop "loop-6" would never end: vars.total cannot change inside it (no step in the loop captures total): capture the variable inside the loop, or add count or over',
      'flow.steps.6.loop.while.var: loop "loop-7" never runs: vars.later is first captured inside it, so the condition is false before the first pass: capture it before the loop too (or test notEquals)',
      'flow.steps.7.loop.while.var: vars.never is not captured before this step: add capture: { never: "$.…" } to an earlier step',
    ]);
  });

  it("keeps users and connection scenarios apart", () => {
    expect(issues(users([]))).toEqual([expect.stringMatching(/^flow\.steps: a users scenario runs each user's steps/)]);
    expect(issues({ ...users([{ connect: {} }]), scenario: { kind: "echo", duration: "5s", message: { rate: 1 } } })).toEqual([
      expect.stringMatching(/^flow\.steps: are a user's steps: set scenario\.kind: users/),
    ]);
    expect(issues({ ...users([{ connect: {} }]), connections: { count: 10, stages: [{ duration: "5s", target: 10 }] } })).toEqual([
      expect.stringMatching(/^connections\.stages: users arrive at scenario\.arrivalRate/),
    ]);
    const http = { ...users([{ connect: {} }]), target: { url: "http://127.0.0.1:8080", protocol: "http" } };
    expect(issues(http)).toEqual(expect.arrayContaining([expect.stringMatching(/^flow\.steps\.0: an HTTP target has no connection/)]));
  });

  it("checks arrival stages against the duration and refuses a line on which nobody arrives", () => {
    const stages = [
      { duration: "20s", target: 10 },
      { duration: "20s", target: 0 },
    ];
    expect(issues(users([{ connect: {} }], { scenario: { kind: "users", arrivalRate: 1, duration: "30s", stages } }))).toEqual([
      "scenario.duration: is shorter than the stages (40s together): set duration to at least 40s",
    ]);
    expect(
      issues(users([{ connect: {} }], { scenario: { kind: "users", arrivalRate: 0, duration: "30s", stages: [{ duration: "30s", target: 0 }] } })),
    ).toEqual(["scenario.stages: no user would ever arrive: give a stage a target above 0"]);
    expect(issues(users([{ connect: {} }], { scenario: { kind: "users", arrivalRate: 0, duration: "30s" } }))).toEqual([
      "scenario.arrivalRate: must be above 0 (users per second), or ramp it up with stages",
    ]);
    const plan = planSchema.parse(users([{ connect: {} }], { agents: { count: 2 }, scenario: { kind: "users", arrivalRate: 1, duration: "40s", stages } }));
    const split = planShards(plan).map((s) => (s.scenario.kind === "users" ? s.scenario.stages!.map((st) => st.target) : []));
    expect(split).toEqual([
      [5, 0],
      [5, 0],
    ]);
  });

  it("connections.reconnect only where a connection's own schedule can go on", () => {
    const echo = (extra: Record<string, unknown>) => ({
      name: "echo",
      target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
      connections: { count: 10, reconnect: { policy: "immediate" } },
      scenario: { kind: "echo", duration: "10s", message: { rate: 1 } },
      ...extra,
    });
    expect(issues(echo({}))).toEqual([]);
    expect(issues(echo({ scenario: { kind: "echo", duration: "10s", message: { rate: 1, per: "aggregate" } } }))).toEqual([
      "connections.reconnect: an aggregate rate goes on over the other connections: reconnect needs message.per: connection",
    ]);
    expect(issues(echo({ connections: { count: 10, reconnect: {}, stages: [{ duration: "5s", target: 10 }] } }))).toEqual([
      "connections.reconnect: connections.stages open and close connections themselves: remove reconnect or the stages",
    ]);
  });

  it("splits arrivals across agents exactly and bounds the run by maxUserTime", () => {
    const plan = planSchema.parse({ ...users([{ connect: {} }]), agents: { count: 3 } });
    const shards = planShards(plan);
    const rates = shards.map((s) => (s.scenario.kind === "users" ? s.scenario.arrivalRate : 0));
    expect(rates.reduce((a, b) => a + b, 0)).toBe(10);
    expect(shards.map((s) => s.connections.count)).toEqual([34, 33, 33]);
    expect(planTiming(plan)).toMatchObject({ sendEndMs: 30_000, endByMs: 30_000 + 120_000 });
  });

  it("has a JSON Schema (the editor's) despite the nested steps", () => {
    const text = JSON.stringify(planJsonSchema());
    expect(text).toContain("arrivalRate");
    expect(text).toContain("disconnect");
  });
});

describe("template data for users", () => {
  const ctx = { connIndex: 0, connRoom: undefined, msgId: "", msgSeq: 0, data: undefined, vars: { order: { id: "ord_1", lines: [{ sku: "tea" }] } } };
  it("reads into captured objects and draws from ranges and lists", () => {
    expect(compileValue("{{ vars.order.id }}")(ctx)).toBe("ord_1");
    expect(compileValue("{{ vars.order.lines.0.sku }}")(ctx)).toBe("tea");
    for (let i = 0; i < 50; i++) {
      const n = compileValue("{{ random.int(1, 3) }}")(ctx) as number;
      expect([1, 2, 3]).toContain(n);
      expect(["a", "b"]).toContain(compileValue("{{ random.pick(a, b) }}")(ctx));
    }
  });
});
