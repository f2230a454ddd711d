import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, planSchema, type Plan } from "@volley/contracts";
import { startWsEchoServer, type WsEchoServer } from "@volley/targets";
import { total } from "./engine-test-kit";
import { armShard, runShard } from "./run-shard";
import { warmedAt, warmShard } from "./shard-warmup";
import type { EngineFrame } from "./types";

const servers: WsEchoServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function target(): Promise<WsEchoServer> {
  const s = await startWsEchoServer();
  servers.push(s);
  return s;
}

const echoPlan = (url: string, protocol?: "socketio"): Plan =>
  planSchema.parse({
    name: "warm-up",
    target: { url, connectTimeout: "2s", ...(protocol ? { protocol } : {}) },
    connections: { count: 10, rate: 1000 },
    scenario: { kind: "echo", message: { rate: 20, bytes: 64, timeout: "2s" }, duration: "2s" },
  });

describe("warming a shard before its start instant", () => {
  it("warms in the lead before a start instant and sends nothing to the target before it (the target's own counts)", async () => {
    const t = await target();
    const plan = echoPlan(t.url);
    expect(warmedAt("ws")).toBeUndefined();
    const startAt = Date.now() + 700;
    const frames: EngineFrame[] = [];
    let startedAt = 0;
    const running = runShard(plan, { startAt, onFrame: (f) => frames.push(f), onStart: (at) => (startedAt = at) });
    await new Promise((r) => setTimeout(r, startAt - Date.now() - 20));
    const beforeStart = { connections: t.connections(), messages: t.holdStats().count, warmedAt: warmedAt("ws") };
    const outcome = await running;

    expect(beforeStart).toMatchObject({ connections: 0, messages: 0 });
    // The dry run happened in the lead and was over before the start instant.
    expect(beforeStart.warmedAt).toBeLessThan(startAt);
    expect(outcome.status).toBe("completed");
    // The schedule began on the start instant, not after the warm-up.
    expect(startedAt).toBeGreaterThanOrEqual(startAt);
    expect(startedAt - startAt).toBeLessThan(100);
    // Every message the target echoed is one the shard counted, and the other way round.
    const sent = total(frames, COUNTERS.sent);
    expect(sent).toBeGreaterThanOrEqual(10 * 20 * 1.5);
    expect(t.holdStats().count).toBe(sent);
    expect(total(frames, COUNTERS.received)).toBe(sent);
    expect(total(frames, COUNTERS.connectionsOpened)).toBe(10);
  });

  it("arms ahead of any start instant on a loopback of its own, the target untouched", async () => {
    const t = await target();
    const warm = await armShard(echoPlan(t.url));
    expect(warm).toMatchObject({ path: "loopback socket" });
    expect(warm.roundTrips).toBeGreaterThan(100);
    expect(t.connections()).toBe(0);
    expect(t.holdStats().count).toBe(0);
    // Armed just now: a start soon after does not dry-run again in its lead.
    expect(await warmShard(echoPlan(t.url), Date.now() + 400, { reuseWithinMs: 30_000 })).toMatchObject({
      roundTrips: 0,
      skipped: expect.stringMatching(/^warmed \d+ ms ago$/),
    });
  });

  it("leaves the first interval of a modest run unsaturated, with its sends counted in it", async () => {
    const t = await target();
    const frames: EngineFrame[] = [];
    const outcome = await runShard(echoPlan(t.url), { startAt: Date.now() + 600, onFrame: (f) => frames.push(f) });
    expect(outcome.status).toBe("completed");
    // On a machine so loaded that it starves the whole run, any second can read saturated; the first
    // may only when a later one does too (the machine), never alone (the engine's own start).
    const later = frames.slice(1).some((f) => f.health.saturated);
    if (later) console.info(`first interval saturated ${frames[0]!.health.saturated}, a later one too: the machine is starving this run`);
    else expect(frames[0]!.health.saturated).toBe(false);
    // 10 connections × 20/s from their opens within the first 10 ms: the first second carries its share.
    expect(frames[0]!.counters[COUNTERS.sent]).toBeGreaterThanOrEqual(150);
  });

  it("warms other protocols through an in-memory echo, and gives up on a start too close or a plan too slow to warm for", async () => {
    const memory = await warmShard(echoPlan("http://127.0.0.1:9/", "socketio"), Date.now() + 400);
    expect(memory).toMatchObject({ path: "in memory" });
    expect(memory.roundTrips).toBeGreaterThan(100);
    const tooClose = await warmShard(echoPlan("ws://127.0.0.1:9/echo"), Date.now() + 30);
    expect(tooClose).toMatchObject({ roundTrips: 0, skipped: "too little time before the start instant" });
    // 1 connection × 1 msg/s: nothing a dry run would warm in time to matter.
    const trickle = planSchema.parse({
      ...echoPlan("ws://127.0.0.1:9/echo"),
      connections: { count: 1, rate: 10 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
    });
    expect(await warmShard(trickle, Date.now() + 400)).toMatchObject({ roundTrips: 0, skipped: "1 msg/s in all is below 100" });
  });
});
