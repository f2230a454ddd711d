import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema } from "@volley/contracts";
import { runShard, type EngineFrame } from "@volley/agent";
import { startJsonRpcWs, type JsonRpcStats, type TestApp } from "@volley/targets";
import { importArtillery } from "./import-artillery";

const apps: TestApp<JsonRpcStats>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

const total = (frames: EngineFrame[], counter: string) => frames.reduce((n, f) => n + (f.counters[counter] ?? 0), 0);

async function run(yaml: string): Promise<EngineFrame[]> {
  const { plan } = importArtillery(yaml);
  const frames: EngineFrame[] = [];
  const outcome = await runShard(planSchema.parse(plan), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
  expect(outcome.status, outcome.error).toBe("completed");
  return frames;
}

/**
 * Imported Artillery scripts send what Artillery's virtual users send: each arriving user runs its
 * scenario once and leaves (Artillery's examples/websockets/test.yml sends one message per user,
 * not one per second for the whole test), checked against the servers' own counters.
 */
describe("Artillery scripts imported as users, run against real servers", { timeout: 30_000 }, () => {
  it("each ws user sends once and leaves: messages = users, as Artillery sends", async () => {
    const app = await startJsonRpcWs();
    apps.push(app);
    const frames = await run(`config:
  target: "${app.url}"
  phases:
    - duration: 2
      arrivalRate: 5
scenarios:
  - engine: ws
    flow:
      - send: { payload: { jsonrpc: "2.0", id: 1, method: "echo", params: { n: "{{ $randomNumber(1, 9) }}" } }, match: { json: "$.id", value: 1 } }
      - think: 0.1
`);
    expect(total(frames, COUNTERS.usersStarted)).toBe(10);
    expect(total(frames, COUNTERS.usersCompleted)).toBe(10);
    expect(total(frames, COUNTERS.sent)).toBe(10);
    expect(total(frames, COUNTERS.received)).toBe(10);
    expect((app.stats() as JsonRpcStats).requests).toBe(10);
  });

  it("a loop with a capture and a captured object's field: every user sends its 2 × 2 messages, as Artillery would", async () => {
    const app = await startJsonRpcWs();
    apps.push(app);
    const frames = await run(`config:
  target: "${app.url}"
  phases:
    - duration: 1
      arrivalRate: 4
scenarios:
  - engine: ws
    flow:
      - loop:
          - send: { payload: { jsonrpc: "2.0", id: 1, method: echo, params: { order: { id: "o-{{ $randomNumber(1, 9) }}" } } }, match: { json: "$.id", value: 1 }, capture: { json: "$.result.order", as: order } }
          - send: { payload: { jsonrpc: "2.0", id: 2, method: echo, params: { cancel: "{{ order.id }}" } }, match: { json: "$.result.cancel", value: "{{ order.id }}" } }
          - think: 0.05
        count: 2
`);
    expect(total(frames, COUNTERS.usersCompleted)).toBe(4);
    expect(total(frames, COUNTERS.sent)).toBe(16);
    expect(total(frames, COUNTERS.received)).toBe(16);
    expect((app.stats() as JsonRpcStats).requests).toBe(16);
  });
});
