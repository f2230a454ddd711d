import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startSocketioEchoServer, startSockjsEchoServer, type EchoServer } from "@volley/targets";
import { runShard } from "./run-shard";
import type { EngineFrame } from "./types";

const servers: EchoServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function total(frames: EngineFrame[], counter: string): number {
  return frames.reduce((n, f) => n + (f.counters[counter] ?? 0), 0);
}

/**
 * The echo scenario end to end over each protocol: 10 connections × 10 msg/s for 2 s against a
 * 20 ms hold asked for per connection (`?delay=20`, the server's own default is 0). Bounds are
 * loose on purpose: replies are late on a busy machine, never early.
 */
async function echoRun(target: PlanInput["target"]) {
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
  expect(latency.getValueAtPercentile(50) / 1000).toBeGreaterThanOrEqual(20);
  // Only "not stuck behind a timeout": long-polling adds a request cycle to every reply, and this
  // machine runs other suites at the same time.
  expect(latency.getValueAtPercentile(50) / 1000).toBeLessThan(1000);
  expect(frames[0]!.histograms[HISTOGRAMS.wsConnect]).toBeDefined();
}

async function socketio(): Promise<string> {
  const server = await startSocketioEchoServer();
  servers.push(server);
  return `${server.url}/?delay=20`;
}

async function sockjs(): Promise<string> {
  const server = await startSockjsEchoServer();
  servers.push(server);
  return `${server.url}?delay=20`;
}

describe("shard engine over Socket.IO and SockJS", { timeout: 20_000 }, () => {
  it("socket.io, reply as an event", async () => {
    await echoRun({ url: await socketio(), protocol: "socketio" });
  });

  it("socket.io, reply through the ack, websocket only", async () => {
    await echoRun({ url: await socketio(), protocol: "socketio", socketio: { ack: true, transports: ["websocket"] } });
  });

  it("socket.io, polling only", async () => {
    await echoRun({ url: await socketio(), protocol: "socketio", socketio: { transports: ["polling"] } });
  });

  it("sockjs over xhr-streaming", async () => {
    await echoRun({ url: await sockjs(), protocol: "sockjs", sockjs: { transports: ["xhr-streaming"] } });
  });

  it("sockjs over websocket", async () => {
    await echoRun({ url: await sockjs(), protocol: "sockjs", sockjs: { transports: ["websocket"] } });
  });

  it("ends errored with the class when nothing listens", async () => {
    const server = await startSocketioEchoServer();
    const url = server.url;
    await server.close();
    const plan = planSchema.parse({
      name: "refused",
      target: { url, protocol: "socketio", connectTimeout: "2s", socketio: { transports: ["websocket"] } },
      connections: { count: 3, rate: 100 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
    });
    const outcome = await runShard(plan, { startAt: Date.now() + 20, onFrame: () => {} });
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toContain("connect refused");
  });
});
