import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { HTTP_PATHS, startHttpTargetServer, startStompEchoServer, type EchoServer } from "@volley/targets";
import { runShard } from "../engine/run-shard";
import type { EngineFrame } from "../engine/types";
import { connectOptionsFor } from "./connect-options";
import type { Driver } from "./driver";
import { driverFor } from "./driver-for";

const servers: EchoServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function total(frames: EngineFrame[], counter: string): number {
  return frames.reduce((n, f) => n + (f.counters[counter] ?? 0), 0);
}

/**
 * Until the engine builds its ConnectOptions with connectOptionsFor (it passes socketio and sockjs
 * only), the plan's other options blocks reach the driver through this wrapper.
 */
function withPlanOptions(plan: ReturnType<typeof planSchema.parse>): Driver {
  const driver = driverFor(plan.target.protocol)!;
  const full = connectOptionsFor(plan.target);
  return { protocol: driver.protocol, connect: (o) => driver.connect({ ...full, ...o, ...pickDefined(full) }) };
}

function pickDefined(o: object): object {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/**
 * The echo scenario end to end over each protocol, as the engine's own protocol tests run it:
 * 10 connections × 10 msg/s for 2 s against a 20 ms hold asked for per connection (`?delay=20`).
 * Bounds are loose on purpose: replies are late on a busy machine, never early.
 */
async function echoRun(target: PlanInput["target"], minP50Ms = 20) {
  const plan = planSchema.parse({
    name: "protocol echo",
    target: { connectTimeout: "5s", ...target },
    connections: { count: 10, rate: 1000 },
    scenario: { kind: "echo", message: { rate: 10, bytes: 64, timeout: "5s" }, duration: "2s" },
  });
  const frames: EngineFrame[] = [];
  const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f), driver: withPlanOptions(plan) });
  expect(outcome).toMatchObject({ status: "completed" });
  const sent = total(frames, COUNTERS.sent);
  expect(sent).toBeGreaterThanOrEqual(10 * 15);
  expect(total(frames, COUNTERS.received)).toBe(sent);
  expect(total(frames, COUNTERS.lost)).toBe(0);
  expect(total(frames, "errors.protocol")).toBe(0);
  expect(total(frames, COUNTERS.connectionsOpened)).toBe(10);
  const latency = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
  expect(latency.getValueAtPercentile(50) / 1000).toBeGreaterThanOrEqual(minP50Ms);
  expect(latency.getValueAtPercentile(50) / 1000).toBeLessThan(1000);
  expect(frames[0]!.histograms[HISTOGRAMS.wsConnect]).toBeDefined();
}

async function serve<T extends EchoServer>(s: Promise<T>): Promise<T> {
  const server = await s;
  servers.push(server);
  return server;
}

describe("shard engine over STOMP and the HTTP family", { timeout: 20_000 }, () => {
  it("stomp over websocket", async () => {
    const s = await serve(startStompEchoServer());
    await echoRun({ url: `${s.url}?delay=20`, protocol: "stomp" });
  });

  it("sse + POST", async () => {
    const s = await serve(startHttpTargetServer());
    await echoRun({ url: `${s.url}${HTTP_PATHS.sse}?delay=20`, protocol: "sse" });
  });

  it("long polling", async () => {
    const s = await serve(startHttpTargetServer());
    await echoRun({ url: `${s.url}/poll?delay=20`, protocol: "long-polling" });
  });

  it("short polling every 50 ms: a reply waits for the next poll", async () => {
    const s = await serve(startHttpTargetServer());
    await echoRun({ url: `${s.url}/poll?delay=20`, protocol: "short-polling", polling: { interval: "50ms" } });
  });

  it("plain http POST, the response is the reply", async () => {
    const s = await serve(startHttpTargetServer());
    await echoRun({ url: `${s.url}${HTTP_PATHS.echo}?delay=20`, protocol: "http" });
  });
});
