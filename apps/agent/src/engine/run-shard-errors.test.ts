import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, ERROR_SAMPLE_CHARS, ERROR_SAMPLES_PER_CLASS, planSchema, runSummarySchema, type IntervalFrame } from "@volley/contracts";
import { IntervalRecorder, summarizeRun } from "@volley/metrics";
import { startJsonRpcWs, startTodoApi, TODO_API_PATHS, type JsonRpcStats, type TestApp, type TodoApiStats } from "@volley/targets";
import { total } from "./engine-test-kit";
import { runShard } from "./run-shard";
import { ShardAccounting } from "./shard-accounting";
import type { EngineFrame } from "./types";

const apps: TestApp<JsonRpcStats | TodoApiStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

type Sample = NonNullable<IntervalFrame["samples"]>[number];
const errorSamples = (frames: EngineFrame[]): Sample[] => frames.flatMap((f) => f.samples ?? []).filter((s) => s.kind === "error");

describe("error samples: what the server said, per error class", { timeout: 20_000 }, () => {
  it("keeps the HTTP status of refused upgrades, the close code and reason, and the text of replies that answer nothing; counts match the server's", async () => {
    // A JSON-RPC gateway with limits: 4 connections at most, 5 calls a second each. Volley's own
    // binary messages are no JSON-RPC, so every one it answers is a parse error that answers nothing.
    const app = await startJsonRpcWs({ maxConnections: 4, maxCallsPerSecond: 5 });
    apps.push(app);
    const plan = planSchema.parse({
      name: "limits",
      target: { url: app.url, protocol: "ws", connectTimeout: "5s" },
      connections: { count: 6, rate: 1000 },
      scenario: { kind: "echo", message: { rate: 20, bytes: 64, timeout: "1s" }, duration: "1500ms" },
    });
    const frames: EngineFrame[] = [];
    const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
    expect(outcome.status).toBe("completed");
    const server = app.stats() as JsonRpcStats;

    expect(server.refused).toBe(2);
    expect(total(frames, COUNTERS.connectionsFailed)).toBe(server.refused);
    expect(total(frames, "errors.handshake")).toBe(server.refused);
    expect(server.rateLimited).toBe(4);
    expect(total(frames, "errors.closed")).toBe(server.rateLimited);
    expect(total(frames, "errors.protocol")).toBe(server.errors);
    expect(server.errors).toBeGreaterThanOrEqual(4 * 5);

    const samples = errorSamples(frames);
    // The same text from many connections is one sample: a class says each distinct thing once.
    expect(samples).toEqual(
      expect.arrayContaining([
        { kind: "error", event: "handshake", data: "connect: HTTP 503" },
        { kind: "error", event: "closed", data: "close 1008 (policy violation): rate limit: more than 5 calls in a second" },
        {
          kind: "error",
          event: "protocol",
          data: 'a message that answers nothing sent: {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the frame is not JSON"}}',
        },
      ]),
    );
    expect(samples).toHaveLength(3);

    // Merged into the summary beside the counts.
    const summary = runSummarySchema.parse(summarizeRun(frames, []));
    expect(summary.errors).toMatchObject({ handshake: 2, closed: 4, protocol: server.errors });
    expect(summary.errorSamples).toEqual({
      handshake: ["connect: HTTP 503"],
      closed: ["close 1008 (policy violation): rate limit: more than 5 calls in a second"],
      protocol: [expect.stringContaining("Parse error")],
    });
  });

  it("counts and samples HTTP error statuses of plain requests (the connection stays open)", async () => {
    const app = await startTodoApi();
    apps.push(app);
    // No log-in: every GET /api/todos is refused 401.
    const plan = planSchema.parse({
      name: "unauthorized",
      target: { url: `${app.httpUrl}${TODO_API_PATHS.todos}`, protocol: "http", http: { method: "GET" } },
      connections: { count: 2, rate: 100 },
      scenario: { kind: "http-rps", message: { rate: 10, per: "aggregate", arrival: "constant", timeout: "2s" }, duration: "1s" },
    });
    const frames: EngineFrame[] = [];
    const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
    expect(outcome.status).toBe("completed");
    const server = app.stats() as TodoApiStats;
    expect(server.unauthorized).toBeGreaterThanOrEqual(9);
    expect(total(frames, "errors.protocol")).toBe(server.unauthorized);
    expect(errorSamples(frames)).toEqual([{ kind: "error", event: "protocol", data: "HTTP 401" }]);
  });

  it("keeps at most ERROR_SAMPLES_PER_CLASS distinct texts per class, each cut to ERROR_SAMPLE_CHARS, and counts every error", () => {
    const recorder = new IntervalRecorder();
    const totals = { expected: 0, sent: 0, received: 0, lost: 0, shed: 0, duplicated: 0, opened: 0, failed: 0, closed: 0 };
    const accounting = new ShardAccounting(recorder, totals, { roomFor: () => undefined, echo: true, canaryRate: undefined }, -1, 64, 1_000_000);
    for (let i = 0; i < 40; i++) accounting.error("closed", `close 1011 (internal error): worker ${i % 10} restarting`);
    accounting.error("closed", "close 1011 (internal error): worker 0 restarting");
    accounting.error("handshake", "x".repeat(1000));
    expect(recorder.take().counters).toMatchObject({ "errors.closed": 41, "errors.handshake": 1 });
    const closed = accounting.samples.filter((s) => s.event === "closed").map((s) => s.data);
    expect(closed).toEqual([0, 1, 2, 3, 4].map((n) => `close 1011 (internal error): worker ${n} restarting`));
    expect(closed).toHaveLength(ERROR_SAMPLES_PER_CLASS);
    const long = accounting.samples.find((s) => s.event === "handshake")!.data;
    expect(long).toBe(`${"x".repeat(ERROR_SAMPLE_CHARS)}…`);
  });
});
