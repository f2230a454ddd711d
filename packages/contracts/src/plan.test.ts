import { describe, expect, it } from "vitest";
import { validatePlan } from "./plan-document";
import { MAX_PLAN_BYTES } from "./plan";

function withTarget(target: Record<string, unknown>) {
  return validatePlan({
    name: "t",
    target,
    connections: { count: 1 },
    scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
  });
}

describe("plan targets per protocol", () => {
  it("accepts socketio and sockjs targets and fills their option defaults", () => {
    const io = withTarget({ url: "http://127.0.0.1:9002", protocol: "socketio", socketio: { ack: true } });
    expect(io.ok && io.plan.target.socketio).toEqual({
      transports: ["polling", "websocket"],
      path: "/socket.io",
      event: "echo",
      ack: true,
      version: 4,
      parser: "default",
    });
    const sj = withTarget({ url: "https://example.com/echo", protocol: "sockjs", sockjs: { transports: ["xhr-streaming"] } });
    expect(sj.ok && sj.plan.target.sockjs).toEqual({ transports: ["xhr-streaming"] });
    // Options stay optional: the driver applies the same defaults.
    const bare = withTarget({ url: "http://127.0.0.1:9003/echo", protocol: "sockjs" });
    expect(bare.ok && bare.plan.target.sockjs).toBeUndefined();
  });

  it("names target.url with the fix when the scheme does not fit the protocol", () => {
    for (const [url, protocol, fix] of [
      ["ws://127.0.0.1:9002", "socketio", "http://"],
      ["wss://example.com/echo", "sockjs", "http://"],
      ["http://127.0.0.1:9001/echo", "ws", "ws://"],
    ] as const) {
      const r = withTarget({ url, protocol });
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.issues).toHaveLength(1);
      expect(r.issues[0]!.path).toBe("target.url");
      expect(r.issues[0]!.message).toContain(fix);
      expect(r.issues[0]!.message).toContain(protocol);
    }
  });

  it("socketio.parser: msgpack for socket.io-msgpack-parser servers (3 and 4); on a Socket.IO 2 target refused with the fix, a typo named", () => {
    const ok = withTarget({ url: "http://127.0.0.1:9002", protocol: "socketio", socketio: { parser: "msgpack", version: 3 } });
    expect(ok.ok && ok.plan.target.socketio).toMatchObject({ parser: "msgpack", version: 3 });
    const v2 = withTarget({ url: "http://127.0.0.1:9002", protocol: "socketio", socketio: { parser: "msgpack", version: 2 } });
    expect(v2.ok ? [] : v2.issues).toEqual([{ path: "target.socketio.parser", message: expect.stringMatching(/Socket\.IO 3 and 4, not 2: set version/) }]);
    const typo = withTarget({ url: "http://127.0.0.1:9002", protocol: "socketio", socketio: { parser: "messagepack" } });
    expect(typo.ok ? [] : typo.issues).toEqual([{ path: "target.socketio.parser", message: expect.stringContaining('"msgpack" (socket.io-msgpack-parser)') }]);
  });

  it("rejects options for another protocol, naming the field", () => {
    const r = withTarget({ url: "ws://127.0.0.1:9001/echo", socketio: { ack: true } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues).toEqual([{ path: "target.socketio", message: expect.stringContaining("protocol: socketio") }]);
    const s = withTarget({ url: "http://127.0.0.1:9002", protocol: "socketio", sockjs: {} });
    expect(s.ok).toBe(false);
    if (!s.ok) expect(s.issues.map((i) => i.path)).toEqual(["target.sockjs"]);
  });

  it("http without a method: GET when no body is given, POST when one is (as ab, wrk and k6 do); a GET with a body is refused", () => {
    const method = (http: Record<string, unknown>) => {
      const r = withTarget({ url: "http://127.0.0.1:9005/echo", protocol: "http", http });
      return r.ok ? r.plan.target.http?.method : r.issues;
    };
    expect(method({})).toBe("GET");
    expect(method({ keepAlive: false })).toBe("GET");
    expect(method({ body: '{"q":1}' })).toBe("POST");
    expect(method({ method: "PUT", body: "x" })).toBe("PUT");
    expect(method({ method: "POST" })).toBe("POST");
    expect(method({ method: "GET", body: "x" })).toEqual([
      { path: "target.http.method", message: "a GET carries no body: set method: POST (or leave method out: a body means POST), or remove body" },
    ]);
  });

  it("rejects unknown option fields and bad values", () => {
    const r = withTarget({
      url: "http://127.0.0.1:9002",
      protocol: "socketio",
      socketio: { transports: ["carrier-pigeon"], path: "socket.io", rooms: [] },
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issues.map((i) => i.path)).toEqual(expect.arrayContaining(["target.socketio.transports.0", "target.socketio.path", "target.socketio"]));
    }
    const s = withTarget({ url: "http://127.0.0.1:9003/echo", protocol: "sockjs", sockjs: { transports: [] } });
    expect(s.ok).toBe(false);
    if (!s.ok) expect(s.issues.map((i) => i.path)).toEqual(["target.sockjs.transports"]);
  });
});

describe("plan target.sockjs.encoding", () => {
  const sockjsPlan = (encoding: string | undefined, flow: boolean) =>
    validatePlan({
      name: "t",
      target: { url: "http://127.0.0.1:9003/chat", protocol: "sockjs", sockjs: encoding ? { encoding } : {} },
      connections: { count: 1 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
      ...(flow ? { flow: { messages: [{ json: { type: "chat", id: "{{ msg.id }}" }, reply: { match: { path: "$.id", equals: "{{ msg.id }}" } } }] } } : {}),
    });

  it("is optional either way, and takes text with a flow and base64 without one", () => {
    for (const [encoding, flow] of [
      [undefined, true],
      [undefined, false],
      ["text", true],
      ["base64", false],
    ] as const)
      expect(sockjsPlan(encoding, flow).ok).toBe(true);
  });

  it("names the field and the fix when it cannot carry the plan's messages", () => {
    for (const [encoding, flow, says] of [
      ["text", false, /without a flow Volley sends its own binary messages.*add a flow.*or remove encoding/],
      ["base64", true, /a flow sends the app's own text.*remove encoding/],
    ] as const) {
      const r = sockjsPlan(encoding, flow);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.issues.map((i) => i.path)).toEqual(["target.sockjs.encoding"]);
        expect(r.issues[0]!.message).toMatch(says);
      }
    }
  });
});

describe("plan agents.onLoss", () => {
  const withAgents = (agents: Record<string, unknown>) =>
    validatePlan({
      name: "t",
      target: { url: "ws://127.0.0.1:9001/echo" },
      connections: { count: 1 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
      agents,
    });

  it("is optional (absent means error) and takes degrade or error", () => {
    const absent = withAgents({ count: 2 });
    expect(absent.ok && absent.plan.agents).toEqual({ pool: "default", count: 2 });
    const degrade = withAgents({ count: 2, onLoss: "degrade" });
    expect(degrade.ok && degrade.plan.agents.onLoss).toBe("degrade");
  });

  it("names the field and the choices for anything else", () => {
    const r = withAgents({ onLoss: "ignore" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues).toEqual([{ path: "agents.onLoss", message: 'use "error" (stop the run) or "degrade" (carry on with the other agents)' }]);
  });
});

describe("plan agents.count", () => {
  const withCount = (count: unknown) =>
    validatePlan({
      name: "t",
      target: { url: "ws://127.0.0.1:9001/echo" },
      connections: { count: 1 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
      agents: { count },
    });
  const fix = 'use a whole number of agents from 1 to 1000, or "all" for every idle agent of the pool';

  it('takes a whole number or "all", and defaults to 1', () => {
    const all = withCount("all");
    expect(all.ok && all.plan.agents.count).toBe("all");
    const three = withCount(3);
    expect(three.ok && three.plan.agents.count).toBe(3);
    const absent = validatePlan({
      name: "t",
      target: { url: "ws://127.0.0.1:9001/echo" },
      connections: { count: 1 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
    });
    expect(absent.ok && absent.plan.agents.count).toBe(1);
  });

  it("names the field and both forms for anything else", () => {
    for (const bad of [0, 1.5, 1001, "some", "2", null]) {
      const r = withCount(bad);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issues).toEqual([{ path: "agents.count", message: fix }]);
    }
  });
});

describe("thresholds", () => {
  const withThresholds = (thresholds: unknown) =>
    validatePlan({
      name: "t",
      target: { url: "ws://127.0.0.1:9/echo", protocol: "ws" },
      connections: { count: 1 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
      thresholds,
    });

  it("takes strings and the abortOnFail object form side by side", () => {
    const r = withThresholds(["errors.rate < 1%", { expression: "latency.p95 < 200ms", abortOnFail: true, delay: "10s" }, { expression: "connect.p95 < 1s" }]);
    expect(r.ok && r.plan.thresholds).toEqual([
      "errors.rate < 1%",
      { expression: "latency.p95 < 200ms", abortOnFail: true, delay: "10s" },
      { expression: "connect.p95 < 1s", abortOnFail: false },
    ]);
  });

  it("names the bad field and the fix", () => {
    const bad = withThresholds([{ expression: "latency.p95 <", abortOnFail: true }, 42, { expression: "latency.p95 < 1s", delay: "soon" }]);
    expect(bad.ok).toBe(false);
    const text = JSON.stringify(!bad.ok && bad.issues);
    expect(text).toContain("thresholds.0.expression");
    expect(text).toMatch(/write it like \\"latency.p95 < 200ms\\"/);
    expect(text).toMatch(/thresholds\.1.*or an object like/);
    expect(text).toContain("thresholds.2.delay");
  });

  it("refuses misspelled and unknown metrics, suggesting the nearest name and listing the known ones", () => {
    const bad = withThresholds(["latncy.p95 < 200ms", "foo.bar < 1", { expression: "delivry.p95 < 1s" }]);
    expect(bad.ok).toBe(false);
    const issues = bad.ok ? [] : bad.issues;
    expect(issues.map((i) => i.path)).toEqual(["thresholds.0", "thresholds.1", "thresholds.2.expression"]);
    expect(issues[0]!.message).toMatch(/^unknown metric "latncy.p95" \(did you mean "latency.p95"\?\); known metrics: .*delivery.*first_message.*canary/);
    expect(issues[1]!.message).toMatch(/^unknown metric "foo.bar"; known metrics: /);
    expect(issues[2]!.message).toMatch(/did you mean "delivery.p95"/);
  });

  it("knows every timed kind the summary reports, with every statistic, and the ratios", () => {
    const kinds = ["latency", "delivery", "connect", "first_message", "canary", "send_lag"];
    const stats = ["p50", "p90", "p95", "p99", "max", "mean"];
    const all = [
      ...kinds.flatMap((k) => stats.map((s) => `${k}.${s} < 1s`)),
      "delivery.ratio > 99%",
      "messages.loss_rate < 1%",
      "connections.failed == 0",
      "errors.rate < 1%",
    ];
    const r = withThresholds(all);
    expect(r.ok ? [] : r.issues).toEqual([]);
  });

  it("refuses a unit that does not fit the metric", () => {
    const r = withThresholds(["latency.p95 < 1%", "errors.rate < 200ms", "connections.failed < 2s"]);
    expect(r.ok ? [] : r.issues.map((i) => i.message)).toEqual([
      'latency.p95 is a time: write a time such as 200ms or 1s, not "1%"',
      'errors.rate is a percentage: write a percentage such as 1%, not "200ms"',
      'connections.failed is a count: write a plain number, not "2s"',
    ]);
  });
});

describe("sanity", () => {
  const withSanity = (sanity: unknown) =>
    validatePlan({
      name: "t",
      target: { url: "ws://127.0.0.1:9/echo", protocol: "ws" },
      connections: { count: 1 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
      sanity,
    });

  it("is on by default, can be turned off or given another loss limit, and names the fix when malformed", () => {
    expect(withSanity(undefined).ok).toBe(true);
    const off = withSanity(false);
    expect(off.ok && off.plan.sanity).toBe(false);
    const limit = withSanity({ maxLossPercent: 0.5 });
    expect(limit.ok && limit.plan.sanity).toEqual({ maxLossPercent: 0.5 });
    const bad = withSanity(true);
    expect(bad.ok ? "" : bad.issues[0]!.message).toMatch(/sanity: false to turn the default checks off/);
  });
});

describe("plan limits", () => {
  const base = () => ({
    name: "t",
    target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" } as Record<string, unknown>,
    connections: { count: 1 } as Record<string, unknown>,
    scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" } as Record<string, unknown>,
    thresholds: [] as unknown[],
  });
  const issues = (plan: unknown) => {
    const r = validatePlan(plan);
    return r.ok ? [] : r.issues;
  };

  it("caps every duration at 7 days, naming the field and the fix (a timer past 2^31 ms fires at once)", () => {
    const fix = "must be at most 7 days (168h, 604800000 ms); split a longer test into several runs";
    expect(issues({ ...base(), scenario: { kind: "echo", message: { rate: 1 }, duration: "99999999999h" } })).toEqual([
      { path: "scenario.duration", message: fix },
    ]);
    expect(issues({ ...base(), scenario: { kind: "echo", message: { rate: 1 }, duration: 604_800_001 } })).toEqual([
      { path: "scenario.duration", message: fix },
    ]);
    expect(issues({ ...base(), scenario: { kind: "echo", message: { rate: 1, timeout: "169h" }, duration: "1s" } })).toEqual([
      { path: "scenario.message.timeout", message: fix },
    ]);
    expect(issues({ ...base(), target: { url: "ws://127.0.0.1:9001/echo", connectTimeout: "10081m" } })).toEqual([
      { path: "target.connectTimeout", message: fix },
    ]);
    expect(issues({ ...base(), thresholds: [{ expression: "latency.p95 < 1s", abortOnFail: true, delay: "8000000s" }] })).toEqual([
      { path: "thresholds.0.delay", message: fix },
    ]);
    // Exactly 7 days is allowed.
    expect(issues({ ...base(), scenario: { kind: "echo", message: { rate: 1 }, duration: "168h" } })).toEqual([]);
  });

  it("caps the stages' total at 7 days too (each stage alone may be under it)", () => {
    const stages = [
      { duration: "100h", target: 1 },
      { duration: "100h", target: 0 },
    ];
    expect(issues({ ...base(), connections: { count: 1, stages } })).toEqual([
      {
        path: "connections.stages",
        message: "the stages last 200h together; must be at most 7 days (168h, 604800000 ms); split a longer test into several runs",
      },
    ]);
  });

  it("caps target.url at 2048 characters, names at 200 and threshold expressions at 200", () => {
    const url = `ws://127.0.0.1:9001/${"a".repeat(2048)}`;
    expect(issues({ ...base(), target: { url } })).toEqual([{ path: "target.url", message: "must be at most 2048 characters" }]);
    expect(issues({ ...base(), target: { url: `ws://127.0.0.1:9001/${"a".repeat(2000)}` } })).toEqual([]);
    expect(issues({ ...base(), name: "n".repeat(201) })).toEqual([{ path: "name", message: "must be at most 200 characters" }]);
    const long = `latency.p95 < ${"9".repeat(200)}ms`;
    expect(issues({ ...base(), thresholds: [long] })).toEqual([
      { path: "thresholds.0", message: 'must be at most 200 characters, like "latency.p95 < 200ms"' },
    ]);
    expect(issues({ ...base(), thresholds: [{ expression: long }] })).toEqual([
      { path: "thresholds.0.expression", message: 'must be at most 200 characters, like "latency.p95 < 200ms"' },
    ]);
    expect(issues({ ...base(), target: { url: "http://127.0.0.1:9002", protocol: "socketio", socketio: { event: "e".repeat(201) } } })).toEqual([
      { path: "target.socketio.event", message: "must be at most 200 characters" },
    ]);
    expect(issues({ ...base(), target: { url: "ws://127.0.0.1:9001/echo", headers: { authorization: "x".repeat(8193) } } })).toEqual([
      { path: "target.headers.authorization", message: "must be at most 8192 characters" },
    ]);
    expect(issues({ ...base(), target: { url: "http://127.0.0.1:9005/echo", protocol: "http", http: { body: "b".repeat(262_145) } } })).toEqual([
      { path: "target.http.body", message: "must be at most 262144 characters" },
    ]);
  });

  it("caps the whole plan at MAX_PLAN_BYTES as JSON, saying how big it is", () => {
    // Every field within its own cap; 50 headers of 8 KiB and a 256 KiB body add up past 512 KiB.
    const headers = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, "v".repeat(8192)]));
    const r = issues({ ...base(), target: { url: "http://127.0.0.1:9005/echo", protocol: "http", headers, http: { body: "b".repeat(262_144) } } });
    expect(r).toHaveLength(1);
    expect(r[0]!.message).toMatch(/^the plan is \d+ bytes as JSON; a plan may be at most 524288 bytes \(512 KiB\)/);
    expect(MAX_PLAN_BYTES).toBe(524_288);
  });
});
