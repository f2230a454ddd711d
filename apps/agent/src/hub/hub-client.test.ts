import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { Server, type Socket as HubSocket } from "socket.io";
import { afterEach, describe, expect, it } from "vitest";
import {
  agentHelloSchema,
  heartbeatSchema,
  intervalFrameSchema,
  planSchema,
  shardEndSchema,
  type AgentHello,
  type Heartbeat,
  type IntervalFrame,
  type ShardEnd,
  type ShardJob,
} from "@volley/contracts";
import { startWsEchoServer } from "@volley/targets";
import { pingThroughputPlan, startPingTarget } from "../engine/ping-target";
import { buildAgentHello } from "./agent-hello";
import { HubClient } from "./hub-client";

/** The test hub's clock runs this far ahead of ours, so a start instant only works if it is converted. */
const HUB_AHEAD_MS = 5000;
const silent = pino({ level: "silent" });
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

interface TestHub {
  url: string;
  hellos: AgentHello[];
  frames: IntervalFrame[];
  /** performance.now() at each frame's arrival, parallel to frames. */
  arrivals: number[];
  acked: Set<number>;
  heartbeats: Heartbeat[];
  /** performance.now() at each heartbeat's arrival, parallel to heartbeats. */
  heartbeatArrivals: number[];
  connections: number;
  socket(): HubSocket;
  /** Resolves with the shard.end and how many distinct frames were acked when it arrived. */
  end: Promise<{ end: ShardEnd; ackedBefore: number; at: number }>;
  /** Set to a seq: the first time that frame arrives it is not acked and the link is cut. */
  dropOnSeq?: number;
}

async function startHub(welcome: Record<string, unknown> = {}): Promise<TestHub> {
  const http = createServer();
  const io = new Server(http);
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  cleanup.push(() => new Promise<void>((r) => void io.close(() => r())));
  let current: HubSocket | undefined;
  let resolveEnd!: (v: { end: ShardEnd; ackedBefore: number; at: number }) => void;
  const hub: TestHub = {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    hellos: [],
    frames: [],
    arrivals: [],
    acked: new Set(),
    heartbeats: [],
    heartbeatArrivals: [],
    connections: 0,
    socket: () => current!,
    end: new Promise((r) => (resolveEnd = r)),
  };
  const nsp = io.of("/agent");
  nsp.use((socket, next) => {
    const hello = agentHelloSchema.safeParse(socket.handshake.auth);
    if (!hello.success) return next(new Error("bad hello"));
    hub.hellos.push(hello.data);
    next();
  });
  nsp.on("connection", (socket) => {
    hub.connections++;
    current = socket;
    socket.emit("welcome", { agentId: "agent-7", ...welcome });
    socket.on("clock.ping", (ack: (a: { hubTime: number }) => void) => ack({ hubTime: Date.now() + HUB_AHEAD_MS }));
    socket.on("heartbeat", (hb: unknown) => {
      hub.heartbeats.push(heartbeatSchema.parse(hb));
      hub.heartbeatArrivals.push(performance.now());
    });
    socket.on("frame", (raw: unknown, ack: (a: unknown) => void) => {
      const frame = intervalFrameSchema.parse(raw);
      hub.frames.push(frame);
      hub.arrivals.push(performance.now());
      if (frame.seq === hub.dropOnSeq) {
        hub.dropOnSeq = undefined;
        socket.conn.close(); // the link drops before the ack goes out
        return;
      }
      hub.acked.add(frame.seq);
      ack({ ok: true });
    });
    socket.on("shard.end", (raw: unknown, ack: (a: unknown) => void) => {
      ack({ ok: true });
      resolveEnd({ end: shardEndSchema.parse(raw), ackedBefore: hub.acked.size, at: performance.now() });
    });
  });
  return hub;
}

async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function setup(welcome: Record<string, unknown> = {}) {
  const echo = await startWsEchoServer();
  cleanup.push(() => echo.close());
  const hub = await startHub(welcome);
  const client = new HubClient({
    hubUrl: hub.url,
    hello: buildAgentHello({ token: "t", name: "test-agent", pool: "default", maxConnections: 100 }),
    log: silent,
    heartbeatMs: 100,
    clockSamples: 4,
    reconnectDelayMs: 50,
    reconnectDelayMaxMs: 200,
  });
  cleanup.push(() => client.stop(1000));
  client.start();
  await until("connect and clock sync", () => client.connected && Math.abs(client.clockOffsetMs - HUB_AHEAD_MS) < 50);
  const job = (shardId: string, duration: string): ShardJob => ({
    runId: "run-1",
    shardId,
    index: 0,
    count: 1,
    plan: planSchema.parse({
      name: "hub test",
      target: { url: echo.url },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", message: { rate: 10 }, duration },
    }),
  });
  const ask = (event: string, payload: unknown) => hub.socket().timeout(2000).emitWithAck(event, payload) as Promise<unknown>;
  return { hub, client, job, ask };
}

describe("hub client", () => {
  it("arms, starts on the hub's clock, and delivers every frame across a dropped link before shard.end", async () => {
    const { hub, client, job, ask } = await setup();
    expect(hub.hellos[0]).toMatchObject({ name: "test-agent", pool: "default", version: "0.1.0", token: "t" });
    expect(hub.hellos[0]!.capacity.cores).toBeGreaterThan(0);

    expect(await ask("shard.assign", job("s1", "2200ms"))).toEqual({ ok: true });
    expect(await ask("shard.assign", job("s1", "2200ms"))).toEqual({ ok: true }); // re-sent after a reconnect: same shard
    expect(await ask("shard.assign", job("s2", "1s"))).toMatchObject({ ok: false, error: expect.stringMatching(/busy with shard s1/) });
    expect(await ask("shard.assign", { shardId: "x" })).toMatchObject({ ok: false, error: expect.stringMatching(/^invalid shard/) });
    expect(client.busy).toBe(true);

    hub.dropOnSeq = 1;
    const startAt = Date.now() + HUB_AHEAD_MS + 300;
    const startedAt = performance.now();
    expect(await ask("shard.start", { shardId: "s1", startAt })).toEqual({ ok: true });

    const { end, ackedBefore } = await hub.end;
    expect(end).toMatchObject({ runId: "run-1", shardId: "s1", status: "completed" });
    const seqs = [...new Set(hub.frames.map((f) => f.seq))];
    expect(seqs).toEqual(Array.from({ length: end.frames }, (_, i) => i)); // none lost, first arrivals in order
    expect(end.frames).toBeGreaterThanOrEqual(3);
    expect(ackedBefore).toBe(end.frames); // shard.end only after every frame was acked
    expect(hub.frames.filter((f) => f.seq === 1).length).toBe(2); // re-sent after the reconnect
    expect(hub.connections).toBeGreaterThanOrEqual(2);
    // The reconnect's hello names the shard held, so a hub that restarted meanwhile can adopt it.
    expect(hub.hellos[0]!.shard).toBeUndefined();
    expect(hub.hellos[1]!.shard).toEqual({ runId: "run-1", shardId: "s1", state: "running" });

    const first = hub.frames[0]!;
    expect(first).toMatchObject({ agentId: "agent-7", runId: "run-1", index: 0, startedAt: startAt });
    // The first frame carries the measured start: planned vs actual, on the hub's clock as the agent sees it.
    expect(first.start?.plannedAt).toBe(startAt);
    expect(first.start!.startedAt - startAt).toBeGreaterThan(-5);
    expect(first.start!.startedAt - startAt).toBeLessThan(1000);
    expect(hub.frames.filter((f) => f.start)).toHaveLength(hub.frames.filter((f) => f.seq === 0).length);
    // Frame 0 closes 1 s after the start instant, which was 300 ms after we sent it (in hub time).
    expect(hub.arrivals[0]! - startedAt).toBeGreaterThan(1250);
    expect(hub.arrivals[0]! - startedAt).toBeLessThan(3000);
    const sent = hub.frames.filter((f, i, all) => all.findIndex((g) => g.seq === f.seq) === i).reduce((n, f) => n + (f.counters["messages.sent"] ?? 0), 0);
    expect(sent).toBeGreaterThan(60);

    expect(hub.heartbeats.some((h) => h.busy)).toBe(true);
    await until("idle after shard.end ack", () => !client.busy);
  });

  it("a hosted hub's welcome makes the agent refuse a target on loopback: the shard ends errored naming the address, nothing is sent", async () => {
    const { hub, job, ask } = await setup({ targetPolicy: { mode: "hosted" } });
    expect(await ask("shard.assign", job("s-hosted", "2s"))).toEqual({ ok: true });
    expect(await ask("shard.start", { shardId: "s-hosted", startAt: Date.now() + HUB_AHEAD_MS + 50 })).toEqual({ ok: true });
    const { end } = await hub.end;
    expect(end).toMatchObject({
      status: "errored",
      error: expect.stringMatching(/^target refused: the host 127\.0\.0\.1 resolves to 127\.0\.0\.1 \(loopback\); hosted Volley only reaches public addresses/),
    });
    const sent = hub.frames.reduce((n, f) => n + (f.counters["messages.sent"] ?? 0) + (f.counters["connections.opened"] ?? 0), 0);
    expect(sent).toBe(0);
  });

  it("aborts on the hub's word and says so in shard.end", async () => {
    const { hub, job, ask } = await setup();
    expect(await ask("shard.assign", job("s3", "30s"))).toEqual({ ok: true });
    expect(await ask("shard.start", { shardId: "s3", startAt: Date.now() + HUB_AHEAD_MS + 50 })).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 1200));
    const abortedAt = performance.now();
    expect(await ask("shard.abort", { shardId: "s3", reason: "stopped by alice" })).toEqual({ ok: true });
    const { end, at } = await hub.end;
    expect(at - abortedAt).toBeLessThan(1000);
    expect(end).toMatchObject({ status: "aborted", error: "stopped by alice", frames: 2 });
    expect(hub.frames.map((f) => f.seq)).toEqual([0, 1]);
  });

  it("keeps its heartbeats flowing through a shard far beyond its capacity, and stops sending within 1 s of the hub's abort", async () => {
    const { hub, job, ask } = await setup();
    const target = await startPingTarget();
    cleanup.push(() => target.stop());
    // The ping-throughput template's 100 × 1700 pings/s: far more than one agent process sends.
    const overload: ShardJob = { ...job("s5", "30s"), plan: planSchema.parse(pingThroughputPlan(target.url)) };
    expect(await ask("shard.assign", overload)).toEqual({ ok: true });
    expect(await ask("shard.start", { shardId: "s5", startAt: Date.now() + HUB_AHEAD_MS + 50 })).toEqual({ ok: true });
    const from = hub.heartbeats.length;
    await new Promise((r) => setTimeout(r, 4000));
    const abortedAt = performance.now();
    expect(await ask("shard.abort", { shardId: "s5", reason: "stopped by the hub" })).toEqual({ ok: true });
    const { end, at } = await hub.end;
    expect(at - abortedAt).toBeLessThan(1000);
    expect(end).toMatchObject({ status: "aborted", error: "stopped by the hub" });

    // Heartbeats every 100 ms all through the overload: never a gap a hub would take for a lost agent.
    const arrivals = [abortedAt - 4000, ...hub.heartbeatArrivals.slice(from)];
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]!);
    console.info(
      `overload over the hub link: ${gaps.length} heartbeats, widest gap ${Math.round(Math.max(...gaps))} ms; shard.end ${Math.round(at - abortedAt)} ms after the abort`,
    );
    expect(gaps.length).toBeGreaterThan(20);
    expect(Math.max(...gaps)).toBeLessThan(600);
    expect(hub.heartbeats.slice(from).some((h) => h.busy)).toBe(true);
    // The frames say the agent was saturated and shed what it could not send.
    expect(hub.frames.some((f) => f.health.saturated)).toBe(true);
    expect(hub.frames.reduce((n, f) => n + (f.counters["messages.shed"] ?? 0), 0)).toBeGreaterThan(0);

    // The target saw the last ping within 1 s of the abort.
    await new Promise((r) => setTimeout(r, 1000));
    const settled = await target.count();
    await new Promise((r) => setTimeout(r, 1500));
    expect(await target.count()).toBe(settled);
  }, 30_000);

  it("on stop, aborts the running shard and flushes its end before disconnecting", async () => {
    const { hub, client, job, ask } = await setup();
    expect(await ask("shard.assign", job("s4", "30s"))).toEqual({ ok: true });
    expect(await ask("shard.start", { shardId: "s4", startAt: Date.now() + HUB_AHEAD_MS + 50 })).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 400));
    await client.stop(2000);
    const { end } = await hub.end;
    expect(end).toMatchObject({ status: "aborted", error: "agent shutting down", frames: 1 });
    expect(client.connected).toBe(false);
  });

  it("falls back to long polling when WebSocket is blocked", async () => {
    const http = createServer();
    const io = new Server(http, { transports: ["polling"] });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    cleanup.push(() => new Promise<void>((r) => void io.close(() => r())));
    io.of("/agent").on("connection", (socket) => {
      socket.on("clock.ping", (ack: (a: { hubTime: number }) => void) => ack({ hubTime: Date.now() + HUB_AHEAD_MS }));
    });
    const client = new HubClient({
      hubUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      hello: buildAgentHello({ token: "t", name: "polling-agent", pool: "default", maxConnections: 10 }),
      log: silent,
      clockSamples: 2,
    });
    cleanup.push(() => client.stop(100));
    client.start();
    await until("connect over polling", () => client.connected && Math.abs(client.clockOffsetMs - HUB_AHEAD_MS) < 50);
  });
});
