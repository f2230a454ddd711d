import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema } from "@volley/contracts";
import { summarizeRun } from "@volley/metrics";
import { httpDriver } from "../drivers/http-driver";
import type { Driver } from "../drivers/driver";
import { total } from "./engine-test-kit";
import { saturationCauses } from "./health-monitor";
import { startHelloHttpProcess, type HelloHttpProcess } from "./hello-http-process";
import { runShard } from "./run-shard";
import type { EngineFrame } from "./types";

const servers: HelloHttpProcess[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.stop();
});

const USERS = 5;
/** Each reply holds the engine thread this long before the engine sees it. */
const HOLD_MS = 2;
const SECONDS = 4;

/**
 * The real HTTP driver, with every reply holding the engine thread HOLD_MS first (Atomics.wait:
 * the thread is stopped, not computing). That is an agent that is the limit while its CPU reads
 * low, as it does when other processes take its core (the runs against Python servers
 * flagged 0–1 of 4–5 seconds): it takes at most 1000 / HOLD_MS replies a second, whatever the
 * server can do. Few users keep each event-loop turn short (≤ USERS × HOLD_MS), so
 * event-loop delay and send lag stay under their limits too: only the busy share can tell.
 */
const holdingDriver: Driver = {
  ...httpDriver,
  async connect(opts) {
    const conn = await httpDriver.connect(opts);
    const onMessage = conn.onMessage.bind(conn);
    const cell = new Int32Array(new SharedArrayBuffer(4));
    conn.onMessage = (cb) =>
      onMessage((data) => {
        Atomics.wait(cell, 0, 0, HOLD_MS);
        cb(data);
      });
    return conn;
  },
};

async function closedLoop(url: string) {
  const plan = planSchema.parse({
    name: "closed loop, agent held per reply",
    target: { url, protocol: "http", connectTimeout: "5s", http: { method: "GET" } },
    connections: { count: USERS, rate: 1000 },
    scenario: { kind: "http-rps", message: { rate: 100_000, timeout: "5s" }, duration: `${SECONDS}s`, loop: "closed" },
  });
  const frames: EngineFrame[] = [];
  const outcome = await runShard(plan, { startAt: Date.now() + 50, onFrame: (f) => frames.push(f), driver: holdingDriver });
  expect(outcome.status).toBe("completed");
  // The seconds the loop sent throughout (the last one drains, and is partial).
  const full = frames.filter((f) => f.durationMs === 1000 && f.index < SECONDS);
  expect(full).toHaveLength(SECONDS);
  for (const f of full)
    console.info(
      `  s${f.index}: ${f.counters[COUNTERS.received] ?? 0} replies, cpu ${f.health.cpu}%, loop busy ${f.health.loopBusy}%, ` +
        `event loop p50 ${f.health.eventLoopDelayMs.p50} max ${f.health.eventLoopDelayMs.max} ms, send lag max ${f.health.sendLagMaxMs} ms, saturated ${f.health.saturated}`,
    );
  return { frames, full, outcome };
}

describe("a closed HTTP loop flags the seconds the agent limited, and only those", () => {
  it("against a server far faster than the agent: the agent's seconds are flagged saturated, by its event loop's busy share", async () => {
    const server = await startHelloHttpProcess();
    servers.push(server);
    const { frames, full, outcome } = await closedLoop(`${server.url}/hello`);
    // The agent set the rate: at most one reply per HOLD_MS, far below what the server answers.
    for (const f of full) expect(f.counters[COUNTERS.received] ?? 0).toBeLessThanOrEqual(1000 / HOLD_MS + USERS);
    expect((await server.stats()).requests).toBe(outcome.totals.sent);
    expect(total(frames, COUNTERS.received)).toBe(outcome.totals.sent);
    // One second may lose its claim to a long stall of the server process on a busy machine; not more.
    const flagged = full.filter((f) => f.health.saturated);
    expect(flagged.length).toBeGreaterThanOrEqual(SECONDS - 1);
    for (const f of flagged) {
      expect(f.health.loopBusy).toBeGreaterThan(90);
      expect(saturationCauses(f.health, { sends: 0, late: 0, closedLoop: true }).join()).toMatch(/event loop busy .* in a closed loop/);
    }
    expect(summarizeRun(frames, []).intervals.saturated).toBeGreaterThanOrEqual(SECONDS - 1);
  }, 30_000);

  it("against a server slower than the agent: the same agent and load are not flagged, its loop mostly waiting", async () => {
    const server = await startHelloHttpProcess();
    servers.push(server);
    // Each answer held 40 ms: USERS users get ~125 replies a second, a quarter of what the agent can take.
    const { frames, full, outcome } = await closedLoop(`${server.url}/hello?delay=40`);
    for (const f of full) {
      expect(f.counters[COUNTERS.received] ?? 0).toBeLessThanOrEqual((USERS * 1000) / 40);
      expect(f.health.loopBusy).toBeLessThan(60);
      expect(f.health.saturated).toBe(false);
    }
    expect((await server.stats()).requests).toBe(outcome.totals.sent);
    expect(total(frames, COUNTERS.received)).toBe(outcome.totals.sent);
  }, 30_000);
});
