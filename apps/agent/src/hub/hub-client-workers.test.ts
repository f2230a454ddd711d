import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { HISTOGRAMS, planSchema, type ShardJob } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { pingThroughputPlan, startPingTarget } from "../engine/ping-target";
import { buildAgentHello } from "./agent-hello";
import { HubClient } from "./hub-client";
import { startTestHub } from "./test-hub";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** A hub and a client on 2 engine threads, connected to it (30 s at most). */
async function connected(hubOpts: Parameters<typeof startTestHub>[0], name: string, heartbeatMs?: number) {
  const hub = await startTestHub(hubOpts);
  cleanup.push(() => hub.close());
  const client = new HubClient({
    hubUrl: hub.url,
    hello: buildAgentHello({ token: "t", name, pool: "default", maxConnections: 1000 }),
    log: pino({ level: "silent" }),
    ...(heartbeatMs ? { heartbeatMs } : {}),
    clockSamples: 2,
    workers: 2,
  });
  cleanup.push(() => client.stop(1000));
  client.start();
  const deadline = performance.now() + 30_000;
  while (!(client.connected && hub.socket()) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return { hub, client, deadline };
}

describe("hub client with engine worker threads", () => {
  it("starts no engine thread while idle and connected; the first assign starts and warms them before its ack", async () => {
    const { hub, client } = await connected({}, "lazy-agent");
    await new Promise((r) => setTimeout(r, 300));
    expect(client.engineThreads).toBe(0);
    const plan = planSchema.parse({
      name: "arm",
      target: { url: "ws://127.0.0.1:9/echo" },
      connections: { count: 4, rate: 100 },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
    });
    const job: ShardJob = { runId: "run-l", shardId: "sl", index: 0, count: 1, plan };
    // From TypeScript sources each thread compiles the engine first: seconds on a busy machine.
    expect(await hub.ask("shard.assign", job, 30_000)).toEqual({ ok: true });
    // Both threads are up by the ack: the hub's start instant never waits on a thread still loading.
    expect(client.engineThreads).toBe(2);
    expect(await hub.ask("shard.abort", { shardId: "sl", reason: "test over" })).toEqual({ ok: true });
  }, 60_000);

  it("keeps the hub link (heartbeats every 100 ms, one connection) through 100 × 1,700 msg/s on 2 workers, frames flagged saturated, abort ends the shard within 1 s", async () => {
    const target = await startPingTarget();
    cleanup.push(() => target.stop());
    // Socket.IO's own liveness check tightened to 1 s + 1 s: a main thread stalled that long loses the link.
    const { hub, deadline } = await connected({ pingIntervalMs: 1000, pingTimeoutMs: 1000 }, "workers-agent", 100);
    const ask = (event: string, payload: unknown) => hub.ask(event, payload);
    const job: ShardJob = { runId: "run-w", shardId: "sw", index: 0, count: 1, plan: planSchema.parse(pingThroughputPlan(target.url)) };
    // The threads start and warm at the assign, before its ack (seconds from TypeScript sources).
    expect(await hub.ask("shard.assign", job, 30_000)).toEqual({ ok: true });
    expect(await ask("shard.start", { shardId: "sw", startAt: Date.now() + 300 })).toEqual({ ok: true });
    while (hub.frames.length === 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const from = hub.heartbeatArrivals.length;
    const watchFrom = performance.now();
    await new Promise((r) => setTimeout(r, 3000));
    const abortedAt = performance.now();
    expect(await ask("shard.abort", { shardId: "sw", reason: "stopped by the hub" })).toEqual({ ok: true });
    const { end, at } = await hub.end;
    expect(at - abortedAt).toBeLessThan(1000);
    expect(end).toMatchObject({ status: "aborted", error: "stopped by the hub" });

    const arrivals = [watchFrom, ...hub.heartbeatArrivals.slice(from)];
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]!);
    console.info(
      `2 workers under 100 × 1,700/s: ${gaps.length} heartbeats, widest gap ${Math.round(Math.max(...gaps))} ms; shard.end ${Math.round(at - abortedAt)} ms after the abort`,
    );
    expect(gaps.length).toBeGreaterThan(20);
    expect(Math.max(...gaps)).toBeLessThan(600);
    expect(hub.connections).toBe(1); // never dropped
    expect(hub.disconnects).toEqual([]);
    // One frame per interval, seq in order, each merged from both workers; saturation flagged, lag reported.
    expect(hub.frames.map((f) => f.seq)).toEqual(hub.frames.map((_, i) => i));
    expect(hub.frames.map((f) => f.index)).toEqual(hub.frames.map((_, i) => i));
    expect(end.frames).toBe(hub.frames.length);
    expect(hub.frames.some((f) => f.health.saturated)).toBe(true);
    // Each engine thread's own health reaches the hub beside the worst one's.
    for (const f of hub.frames) {
      expect(f.health.workers).toHaveLength(2);
      expect(f.health.saturated).toBe(f.health.workers!.some((w) => w.saturated));
    }
    expect(hub.frames.reduce((n, f) => n + (f.counters["messages.shed"] ?? 0), 0)).toBeGreaterThan(0);
    expect(mergeEncoded(hub.frames.flatMap((f) => f.histograms[HISTOGRAMS.sendLag] ?? [])).getValueAtPercentile(99) / 1000).toBeGreaterThan(10);
    expect(hub.frames[0]!.start).toBeDefined();
  }, 60_000);
});
