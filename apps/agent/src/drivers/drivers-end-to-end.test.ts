import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { HTTP_PATHS, startHttpTargetServer, startSocketclusterEchoServer, startSocketioEchoServer, startSocketioV2EchoServer, startStompEchoServer, type EchoServer } from "@volley/targets";
import { runShard } from "../engine/run-shard";
import type { EngineFrame } from "../engine/types";

const servers: EchoServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function total(frames: EngineFrame[], counter: string): number {
  return frames.reduce((n, f) => n + (f.counters[counter] ?? 0), 0);
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
  const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
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

describe("shard engine over STOMP, SocketCluster, Socket.IO v2 and the HTTP family", { timeout: 20_000 }, () => {
  // The ping-throughput template: the server answers each ping `{count}`, not an echo; the ack (or
  // the invoke's response) still answers that very message, so it is matched and timed.
  it("socket.io ping answered {count} through the ack", async () => {
    const s = await serve(startSocketioEchoServer());
    await echoRun({ url: `${s.url}/ping?delay=20`, protocol: "socketio", socketio: { transports: ["websocket"], event: "ping", ack: true } });
  });

  it("socketcluster ping procedure answered {count}", async () => {
    const s = await serve(startSocketclusterEchoServer());
    await echoRun({ url: `${s.url}?delay=20`, protocol: "socketcluster", socketcluster: { mode: "invoke", event: "ping" } });
  });

  it("stomp over websocket", async () => {
    const s = await serve(startStompEchoServer());
    await echoRun({ url: `${s.url}?delay=20`, protocol: "stomp" });
  });

  for (const mode of ["invoke", "transmit"] as const) {
    it(`socketcluster ${mode}`, async () => {
      const s = await serve(startSocketclusterEchoServer());
      await echoRun({ url: `${s.url}?delay=20`, protocol: "socketcluster", socketcluster: { mode } });
    });
  }

  it("socketcluster publish to the connection's own channel (channel messages are never held)", async () => {
    const s = await serve(startSocketclusterEchoServer());
    await echoRun({ url: `${s.url}?delay=20`, protocol: "socketcluster", socketcluster: { mode: "publish" } }, 0);
  });

  it("socket.io v2 (Engine.IO 3) with acks over polling", async () => {
    const s = await serve(startSocketioV2EchoServer());
    await echoRun({ url: `${s.url}/?delay=20`, protocol: "socketio", socketio: { version: 2, ack: true, transports: ["polling"] } });
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
