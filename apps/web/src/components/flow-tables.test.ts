import { COUNTERS, HISTOGRAMS, planSchema, runSummarySchema, type Plan, type Run } from "@volley/contracts";
import { IntervalRecorder, summarizeRun, type FrameLike } from "@volley/metrics";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { FlowSteps } from "./flow-steps";
import { SummaryTables } from "./summary-tables";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

/** The chat flow of the design notes: log in, connect with the token, join a room, then chat. */
const chatPlan: Plan = planSchema.parse({
  name: "chat flow",
  target: { url: "http://127.0.0.1:9010", protocol: "socketio" },
  connections: { count: 4, rate: 100 },
  scenario: { kind: "echo", duration: "2s", message: { rate: 5, timeout: "5s" } },
  flow: {
    data: { csv: "user\nann\nbob\ncid\ndee" },
    setup: [
      { request: { name: "login", method: "POST", url: "/login", json: { user: "{{ data.user }}" }, capture: { token: "$.token" } } },
      { connect: { auth: { token: "{{ vars.token }}" } } },
      { send: { name: "join", event: "join", json: { room: "room-{{ conn.index }}" } } },
      { waitFor: { name: "joined", event: "joined", capture: { members: "$.members" } } },
      { think: "100ms" },
    ],
    messages: [
      {
        event: "chat",
        weight: 3,
        json: { text: "hi #{{ msg.seq }}", clientMsgId: "{{ msg.id }}" },
        reply: { event: "message", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
      },
      { name: "typing", event: "typing", json: {}, reply: false },
    ],
  },
});

function frame(index: number, fill: (r: IntervalRecorder) => void, samples: FrameLike["samples"] = null): FrameLike {
  const r = new IntervalRecorder();
  fill(r);
  return { index, startedAt: 1000 * index, durationMs: 1000, warmup: false, ...r.take(), health, samples };
}

function flowRun(): Run {
  const frames = [
    frame(
      0,
      (r) => {
        // Frames carry steps in the order they first completed, not the plan's.
        for (const ms of [3, 4, 5]) r.recordMicros("setup.joined", ms * 1000);
        for (const ms of [40, 42, 45]) r.recordMicros("setup.login", ms * 1000);
        r.increment("errors.setup.login", 1);
        r.increment(COUNTERS.sent, 30);
        r.increment(COUNTERS.received, 30);
        for (let i = 0; i < 30; i++) r.recordMicros(HISTOGRAMS.messageLatency, 2500);
        r.increment("events.message", 30);
        r.increment("events.presence", 7);
        r.increment("unmatched.presence", 7);
        r.increment(COUNTERS.unmatched, 7);
      },
      [
        { event: "presence", data: '{"user":"ann","online":true}' },
        { event: "presence", data: "<script>alert(1)</script>" },
      ],
    ),
  ];
  const summary = runSummarySchema.parse(summarizeRun(frames, ["messages.unmatched < 10"], chatPlan));
  return {
    id: "run_flow",
    status: "passed",
    reason: null,
    name: "chat flow",
    plan: chatPlan,
    createdAt: "2026-01-01T00:00:00Z",
    startedAt: null,
    endedAt: null,
    summary,
  };
}

const text = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describe("flow results on the run page", () => {
  it("shows setup steps, events with unmatched counts, and unmatched samples as text", () => {
    const html = renderToStaticMarkup(createElement(SummaryTables, { run: flowRun() }));
    const setup = html.slice(html.indexOf('data-testid="flow-setup"'), html.indexOf('data-testid="flow-events"'));
    // login: 3 completed, 1 failed, p50 42 ms; joined: 3 completed, none failed.
    expect(text(setup)).toMatch(/login 3 1 42\.0\sms/);
    expect(text(setup)).toMatch(/joined 3 0 4\.00\sms/);
    // In the plan's order, whatever order the frames carried them in.
    expect(setup.indexOf(">login<")).toBeLessThan(setup.indexOf(">joined<"));
    const events = html.slice(html.indexOf('data-testid="flow-events"'), html.indexOf('data-testid="flow-samples"'));
    expect(text(events)).toContain("message 30 0");
    expect(text(events)).toContain("presence 7 7");
    const samples = html.slice(html.indexOf('data-testid="flow-samples"'));
    expect(samples).toContain("{&quot;user&quot;:&quot;ann&quot;,&quot;online&quot;:true}");
    // A sample is the server's text, never markup.
    expect(samples).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("<script>");
    // A failed setup step is an error class of its own, labelled by its step.
    expect(text(html)).toContain("Setup step login 1");
  });

  it("shows no flow section for a run without a flow's metrics", () => {
    const run = flowRun();
    const { flow: _flow, ...rest } = run.summary!;
    const html = renderToStaticMarkup(createElement(SummaryTables, { run: { ...run, summary: rest } }));
    expect(html).not.toContain("flow-summary");
    expect(html).toContain("run-summary");
  });
});

describe("the plan editor's flow list", () => {
  it("lists setup steps with kind and name, then message kinds with their share and reply rule", () => {
    const t = text(renderToStaticMarkup(createElement(FlowSteps, { flow: chatPlan.flow! })));
    expect(t).toContain("Data: 4 rows (CSV), one per connection");
    expect(t).toContain("request login POST /login with JSON, captures token");
    expect(t).toContain("connect with auth");
    expect(t).toContain("send join event join");
    expect(t).toMatch(/waitFor joined event joined, up to 10\ss, captures members/);
    expect(t).toMatch(/think 100\sms/);
    expect(t).toContain("message-1 event chat (JSON), 75% of sends (weight 3) reply: event message where $.clientMsgId = {{ msg.id }}");
    expect(t).toContain("typing event typing (JSON), 25% of sends (weight 1) reply: no reply awaited (fire and forget)");
  });
});

describe("users results and steps", () => {
  const usersPlan: Plan = planSchema.parse({
    name: "shop users",
    target: { url: "ws://127.0.0.1:9010/shop", protocol: "ws" },
    connections: { count: 50 },
    scenario: { kind: "users", arrivalRate: 5, duration: "10s" },
    flow: {
      steps: [
        { request: { name: "login", method: "POST", url: "/api/login", capture: { token: "$.token" } } },
        { connect: { query: { token: "{{ vars.token }}" }, reconnect: { policy: "backoff" } } },
        {
          loop: {
            count: 3,
            steps: [{ send: { json: { type: "order" }, reply: { match: { path: "$.type", equals: "order.created" } } } }, { think: { min: "1s", max: "2s" } }],
          },
        },
      ],
    },
  });

  it("names each step as the agent reports it, nested steps by their position", () => {
    const t = text(renderToStaticMarkup(createElement(FlowSteps, { flow: usersPlan.flow! })));
    expect(t).toContain("Each user");
    expect(t).toContain("request login POST /api/login, captures token");
    expect(t).toContain("connect reconnects (backoff, up to 5 tries)");
    expect(t).toContain("loop 3 times");
    expect(t).toContain("send send-3-1 a message, waits for a message where $.type = order.created");
    expect(t).toMatch(/think 1\.0\ss to 2\.0\ss \(uniform\)/);
  });

  it("shows users' outcomes, reconnects and step times on the run page", () => {
    const frames = [
      frame(0, (r) => {
        r.increment(COUNTERS.usersStarted, 10);
        r.increment(COUNTERS.usersCompleted, 9);
        r.increment(COUNTERS.usersFailed, 1);
        r.increment("errors.step.send-3-1", 1);
        r.increment(COUNTERS.reconnects, 4);
        for (let i = 0; i < 4; i++) r.recordMicros(HISTOGRAMS.reconnectTime, 300_000);
        for (let i = 0; i < 27; i++) r.recordMicros("step.send-3-1", 2000);
        for (let i = 0; i < 10; i++) r.recordMicros(HISTOGRAMS.userTime, 5_000_000);
      }),
    ];
    const summary = runSummarySchema.parse(summarizeRun(frames, ["users.failed_rate < 20%"], usersPlan));
    const run: Run = {
      id: "run_users",
      status: "passed",
      reason: null,
      name: "shop users",
      plan: usersPlan,
      createdAt: "2026-01-01T00:00:00Z",
      startedAt: null,
      endedAt: null,
      summary,
    };
    const html = renderToStaticMarkup(createElement(SummaryTables, { run }));
    const t = text(html);
    expect(t).toMatch(/Started 10 Completed 9 Failed 1 \(10\.0\s?%\) Dropped 0/);
    expect(t).toMatch(/Reconnected \(p50 \/ p90 \/ max\) 4 \(30\d\.?\d*\sms/);
    expect(t).toMatch(/send-3-1 27 1 2\.00\sms/);
    expect(t).toContain("User step send-3-1 1");
  });
});
