import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { COUNTERS, HISTOGRAMS, planSchema, type Plan, type PlanInput } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { startWsEchoServer, type WsEchoServer } from "@volley/targets";
import { startApp, TARGETS_ON_FREE_PORTS } from "@volley/devstack";
import type { Driver } from "../drivers/driver";
import { wsDriver } from "../drivers/ws-driver";
import { runShard } from "./run-shard";
import type { EngineFrame } from "./types";
import { total } from "./engine-test-kit";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function echo(delayMs = 0): Promise<WsEchoServer> {
  const server = await startWsEchoServer({ delayMs });
  cleanup.push(() => server.close());
  return server;
}

/**
 * The echo target as its own process, as in production and the benchmarks: in-process, its hold
 * timers and the engine's send loop would share one event loop and add each other's lag.
 */
async function echoProcess(delayMs: number): Promise<string> {
  const target = startApp("targets", {
    ...process.env,
    ...TARGETS_ON_FREE_PORTS,
    LOG_LEVEL: "info",
  });
  cleanup.push(() => target.stop().then(() => undefined));
  const line = await target.waitFor(/listening on ws:\/\//, 30_000);
  return `${/(ws:\/\/[^\s"]+)/.exec(line)![1]}?delay=${delayMs}`;
}

function plan(
  url: string,
  overrides: { connections?: PlanInput["connections"]; message?: Partial<PlanInput["scenario"]["message"]>; duration?: string; warmup?: string } = {},
): Plan {
  return planSchema.parse({
    name: "test",
    target: { url, connectTimeout: "2s" },
    connections: overrides.connections ?? { count: 20, rate: 1000 },
    scenario: {
      kind: "echo",
      message: { rate: 20, bytes: 64, ...overrides.message },
      duration: overrides.duration ?? "1s",
      warmup: overrides.warmup ?? 0,
    },
  });
}

function latencyMs(frames: EngineFrame[], percentile: number): number {
  const h = mergeEncoded(frames.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
  return h.getValueAtPercentile(percentile) / 1000;
}

async function run(p: Plan, opts: { signal?: AbortSignal; startInMs?: number } = {}) {
  const frames: EngineFrame[] = [];
  const startAt = Date.now() + (opts.startInMs ?? 20);
  const outcome = await runShard(p, { startAt, onFrame: (f) => frames.push(f), signal: opts.signal });
  return { outcome, frames, startAt };
}

describe("shard engine", () => {
  it("measures the true latency of a 25 ms echo and sends exactly the schedule", async () => {
    const url = await echoProcess(25);
    // 20 connections × 20 msg/s; duration chosen so every connection's last slot is well inside the run.
    const { outcome, frames, startAt } = await run(plan(url, { duration: "3005ms" }));
    expect(outcome.status).toBe("completed");

    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBe(outcome.totals.sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.lost)).toBe(0);
    // Our own closes at the end are closed connections, not drops.
    expect(total(frames, COUNTERS.connectionsClosed)).toBe(20);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(0);
    expect(Math.abs(sent - outcome.totals.expected)).toBeLessThanOrEqual(1);
    // Each connection sends for exactly its own 3005 ms from its open, however long it took to connect: 61 slots.
    expect(sent).toBe(20 * 61);

    // Never below the true hold time; the upper bound is loose because this VM pauses whole
    // processes for 10-30 ms now and then. The ±1 ms figure is measured in bench/, not here.
    expect(latencyMs(frames, 0)).toBeGreaterThanOrEqual(25 - 0.05); // one HdrHistogram bucket
    const p50 = latencyMs(frames, 50);
    expect(p50).toBeGreaterThanOrEqual(25);
    // Judge the upper bound only when the agent says it was not disturbed: a paused agent makes
    // latency honestly worse, and must then say so in its health (that is the product's promise).
    const quiet = frames.filter((f) => !f.health.saturated && f.health.eventLoopDelayMs.max < 30 && f.health.sendLagMaxMs < 30);
    if (quiet.length > 0) expect(latencyMs(quiet, 50)).toBeLessThan(25 + 30);
    else expect(frames.some((f) => f.health.eventLoopDelayMs.max >= 30 || f.health.sendLagMaxMs >= 30)).toBe(true);

    expect(frames.map((f) => f.index)).toEqual([0, 1, 2, 3]);
    expect(frames.map((f) => f.startedAt)).toEqual([0, 1, 2, 3].map((i) => startAt + i * 1000));
    expect(frames.slice(0, 3).every((f) => f.durationMs === 1000)).toBe(true);
    expect(frames[3]!.durationMs).toBeLessThan(1000);
    // Sending time: every full interval, then, in the last, until the last connection's own 3 s
    // window ends (opened at the earliest 20 ms into the ramp: ≥ 20 ms); the wait for the last
    // replies after that is not sending.
    expect(frames.slice(0, 3).map((f) => f.activeMs)).toEqual([1000, 1000, 1000]);
    expect(frames[3]!.activeMs).toBeGreaterThanOrEqual(19);
    expect(frames[3]!.activeMs).toBeLessThan(frames[3]!.durationMs);
    expect(total(frames, COUNTERS.connectionsOpened)).toBe(20);
    expect(frames[0]!.histograms[HISTOGRAMS.wsConnect]).toBeDefined();
    expect(frames[1]!.counters[COUNTERS.connectionsActive]).toBe(20);
    expect(frames.at(-1)!.counters[COUNTERS.connectionsActive]).toBe(0);
  });

  it("does not hide a 500 ms stall (no coordinated omission)", async () => {
    const server = await echo(0);
    // The stall is placed 1 s after the run's own start, whatever the machine's speed before it.
    const startInMs = 200;
    const stall = setTimeout(() => server.stall(500), startInMs + 1000);
    cleanup.push(() => clearTimeout(stall));
    const { outcome, frames } = await run(plan(server.url, { duration: "3s" }), { startInMs });
    expect(outcome.status).toBe("completed");
    expect(total(frames, COUNTERS.received)).toBe(total(frames, COUNTERS.sent));
    // ~1/6 of messages were sent into the stall; a closed-loop tester would have sent only 20 of them.
    expect(latencyMs(frames, 99)).toBeGreaterThanOrEqual(400);
    const quiet = frames.every((f) => f.health.eventLoopDelayMs.max < 50 && f.health.sendLagMaxMs < 50);
    if (quiet) expect(latencyMs(frames, 50)).toBeLessThan(100);
  });

  it("ends errored, promptly, when the target refuses every connection", async () => {
    const server = await echo();
    const url = server.url;
    await server.close();
    const started = performance.now();
    const { outcome, frames } = await run(plan(url, { connections: { count: 50, rate: 500 } }));
    expect(performance.now() - started).toBeLessThan(5000); // promptly, never a hang
    expect(outcome.status).toBe("errored");
    expect(outcome.error).toBe(`connect refused: ${url} (ECONNREFUSED) — 50 of 50 attempts failed`);
    expect(total(frames, COUNTERS.connectionsFailed)).toBe(50);
    expect(total(frames, "errors.refused")).toBe(50);
  });

  it("aborts well within the 1 s budget and flushes the partial frame", async () => {
    const server = await echo();
    const controller = new AbortController();
    const running = run(plan(server.url, { connections: { count: 5, rate: 100 }, duration: "30s" }), { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 1300));
    const abortedAt = performance.now();
    controller.abort("user pressed stop");
    const { outcome, frames } = await running;
    expect(performance.now() - abortedAt).toBeLessThan(1000); // the design's abort budget
    expect(outcome).toMatchObject({ status: "aborted", error: "user pressed stop", frames: 2 });
    expect(frames[1]!.durationMs).toBeGreaterThan(200);
    expect(frames[1]!.durationMs).toBeLessThan(1000);
    expect(total(frames, COUNTERS.sent)).toBeGreaterThan(0);
  });

  it("counts a reply after the timeout as lost once, and duplicates separately", async () => {
    const slow = await echo(250);
    const late = await run(plan(slow.url, { connections: { count: 2, rate: 100 }, message: { rate: 10, timeout: "100ms" }, duration: "500ms" }));
    expect(late.outcome.status).toBe("completed");
    expect(total(late.frames, COUNTERS.received)).toBe(0);
    expect(total(late.frames, COUNTERS.lost)).toBe(total(late.frames, COUNTERS.sent));

    const twice = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    cleanup.push(() => new Promise<void>((r) => twice.close(() => r())));
    twice.on("connection", (ws) => ws.on("message", (d) => (ws.send(d), ws.send(d))));
    await new Promise((r) => twice.once("listening", r));
    const url = `ws://127.0.0.1:${(twice.address() as AddressInfo).port}/`;
    const dup = await run(plan(url, { connections: { count: 2, rate: 100 }, message: { rate: 20 }, duration: "500ms" }));
    const sent = total(dup.frames, COUNTERS.sent);
    expect(sent).toBeGreaterThan(0);
    expect(total(dup.frames, COUNTERS.received)).toBe(sent);
    // The last replies' duplicates can arrive after the shard has ended.
    expect(total(dup.frames, COUNTERS.duplicated)).toBeGreaterThanOrEqual(sent - 2);
  });

  it("counts connections closed by the server without failing the shard", async () => {
    const server = await echo(0);
    const kill = setTimeout(() => void server.close(), 400);
    cleanup.push(() => clearTimeout(kill));
    const { outcome, frames } = await run(plan(server.url, { connections: { count: 4, rate: 100 }, duration: "800ms" }));
    expect(outcome.status).toBe("completed");
    expect(total(frames, COUNTERS.connectionsClosed)).toBe(4);
    expect(total(frames, COUNTERS.connectionsDropped)).toBe(4);
    expect(total(frames, "errors.closed")).toBe(4);
  });

  it("a wake-up late past the end still sends every slot due before it, timed from its intended instant", async () => {
    const server = await echo(0);
    // The agent "loses" 2 s (a preempted or blocked process) just as the first reply arrives: its
    // clock is past the shard's end while 18 of the 20 planned slots are still unsent and, once
    // both first replies are in, nothing is outstanding. Open loop: those slots go out late, counted.
    let jumpUs = 0;
    let opened = 0;
    const clock = { monoUs: () => performance.now() * 1000 + jumpUs, hubNowMs: () => Date.now() };
    const driver: Driver = {
      protocol: "ws",
      async connect(opts) {
        const conn = await wsDriver.connect(opts);
        opened++;
        return {
          send: (payload) => conn.send(payload),
          onMessage: (cb) =>
            conn.onMessage((data) => {
              // Once both are open: a connection opening after the jump would be past the end, with nothing to send.
              if (opened === 2) jumpUs = 2_000_000;
              cb(data);
            }),
          onClose: (cb) => conn.onClose(cb),
          close: () => conn.close(),
        };
      },
    };
    const frames: EngineFrame[] = [];
    const p = plan(server.url, { connections: { count: 2, rate: 1000 }, message: { rate: 10 }, duration: "1s" });
    const outcome = await runShard(p, { startAt: Date.now() + 20, clock, driver, onFrame: (f) => frames.push(f) });
    expect(outcome.status).toBe("completed");
    expect(outcome.totals).toMatchObject({ expected: 20, sent: 20, received: 20, lost: 0 });
    expect(total(frames, COUNTERS.sent)).toBe(20);
    // The late slots are reported at their true lateness, not as on-time messages.
    expect(latencyMs(frames, 100)).toBeGreaterThanOrEqual(1000);
  });

  it("spreads an aggregate rate over the open connections and marks warm-up", async () => {
    const server = await echo(0);
    const { outcome, frames } = await run(
      plan(server.url, {
        connections: { count: 10, rate: 1000 },
        message: { rate: 200, per: "aggregate", arrival: "poisson" },
        duration: "1500ms",
        warmup: "1s",
      }),
    );
    expect(outcome.status).toBe("completed");
    const sent = total(frames, COUNTERS.sent);
    // Poisson: 300 expected; 5 standard deviations either way.
    expect(sent).toBeGreaterThan(300 - 5 * Math.sqrt(300));
    expect(sent).toBeLessThan(300 + 5 * Math.sqrt(300));
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(frames.map((f) => f.warmup)).toEqual([true, false]);
  });
});
