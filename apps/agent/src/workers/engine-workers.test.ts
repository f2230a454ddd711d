import { afterEach, describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type PlanInput } from "@volley/contracts";
import { decodeHistogram, mergeEncoded } from "@volley/metrics";
import { startSocketioChat, startWsEchoServer } from "@volley/targets";
import { total } from "../engine/engine-test-kit";
import { pingThroughputPlan, startPingTarget } from "../engine/ping-target";
import type { EngineFrame } from "../engine/types";
import { EngineWorkers } from "./engine-workers";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function pool(size: number): Promise<EngineWorkers> {
  const workers = new EngineWorkers(size);
  cleanup.push(() => workers.close());
  await workers.warm();
  return workers;
}

function echoPlan(url: string, over: Partial<PlanInput> = {}) {
  return planSchema.parse({
    name: "workers",
    target: { url, connectTimeout: "5s" },
    connections: { count: 10, rate: 1000 },
    scenario: { kind: "echo", message: { rate: 20, per: "connection", arrival: "constant", timeout: "5s" }, duration: "2s" },
    ...over,
  });
}

const PERCENTILES = [0, 50, 90, 99, 99.9, 100];
const shape = (b64s: string[]) => {
  const h = mergeEncoded(b64s);
  return { count: h.totalCount, ...Object.fromEntries(PERCENTILES.map((p) => [`p${p}`, h.getValueAtPercentile(p)])) };
};

describe("engine worker threads", () => {
  it("a thread none of whose connections opened does not end the shard while the other thread's connections run, as one thread would not", async () => {
    const app = await startSocketioChat();
    cleanup.push(() => app.close());
    const workers = await pool(2);
    const merged: EngineFrame[] = [];
    // Three connections split 2 + 1: the third's row has no user, which the app's login refuses, so
    // the second thread's only connection fails its setup while the first thread's two log in and chat.
    const plan = planSchema.parse({
      name: "workers, one thread's connections all refused",
      target: { url: app.url, protocol: "socketio", connectTimeout: "5s" },
      connections: { count: 3, rate: 100 },
      scenario: { kind: "echo", message: { rate: 5, timeout: "5s" }, duration: "2s" },
      flow: {
        data: { csv: 'user\nann\nbob\n""' },
        setup: [
          { request: { name: "login", method: "POST", url: "/login", json: { user: "{{ data.user }}" }, capture: { token: "$.token" } } },
          { connect: { auth: { token: "{{ vars.token }}" } } },
          { send: { name: "join", event: "join", json: { room: "room-{{ conn.index }}" } } },
          { waitFor: { name: "joined", event: "joined" } },
        ],
        messages: [
          {
            event: "chat",
            json: { room: "room-{{ conn.index }}", text: "hi", clientMsgId: "{{ msg.id }}" },
            reply: { event: "message", match: { path: "$.clientMsgId", equals: "{{ msg.id }}" } },
          },
        ],
      },
    });
    const outcome = await workers.run(plan, { startAt: Date.now() + 50, onFrame: (f) => merged.push(f) });
    expect(outcome).toMatchObject({ status: "completed", totals: { opened: 2, failed: 1 } });
    expect(app.stats().logins).toBe(2);
    expect(app.stats().joins).toBe(2);
    expect(total(merged, COUNTERS.received)).toBe(app.stats().chatsReceived);
    expect(app.stats().chatsReceived).toBeGreaterThan(0);
  });

  it("2 workers run exactly the planned messages, and each merged frame's counters and histograms are the sum of the workers' frames", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const workers = await pool(2);
    const merged: EngineFrame[] = [];
    const own: EngineFrame[][] = [[], []];
    const outcome = await workers.run(echoPlan(server.url), { startAt: Date.now() + 50, onFrame: (f) => merged.push(f) }, (w, f) => own[w]!.push(f));

    // 10 connections × 20/s × 2 s from each one's open, constant arrival: exactly 400 messages, as one thread plans it.
    expect(outcome).toMatchObject({ status: "completed", totals: { expected: 400, sent: 400, received: 400, lost: 0, shed: 0, opened: 10, failed: 0 } });
    expect(total(merged, COUNTERS.sent)).toBe(400);
    expect(total(merged, COUNTERS.received)).toBe(400);
    // The server's own count of messages it echoed.
    expect(server.holdStats().count).toBe(400);
    // Each worker had its half of the connections (5 + 5), and its own share of the messages.
    expect(own.map((frames) => total(frames, COUNTERS.connectionsOpened))).toEqual([5, 5]);
    expect(own.map((frames) => total(frames, COUNTERS.sent))).toEqual([200, 200]);

    // One frame per interval, in order; frame k is exactly worker 0's frame k plus worker 1's.
    expect(outcome.frames).toBe(merged.length);
    expect(merged.map((f) => f.index)).toEqual(merged.map((_, k) => k));
    expect(merged.length).toBe(Math.max(own[0]!.length, own[1]!.length));
    for (const f of merged) {
      const parts = own.map((frames) => frames.find((g) => g.index === f.index)).filter((g): g is EngineFrame => g !== undefined);
      const counters: Record<string, number> = {};
      for (const p of parts) for (const [k, v] of Object.entries(p.counters)) counters[k] = (counters[k] ?? 0) + v;
      expect(f.counters).toEqual(counters);
      const names = new Set(parts.flatMap((p) => Object.keys(p.histograms)));
      expect(Object.keys(f.histograms).sort()).toEqual([...names].sort());
      for (const name of names)
        expect(shape([f.histograms[name]!]), `${name} in frame ${f.index}`).toEqual(shape(parts.flatMap((p) => p.histograms[name] ?? [])));
      expect(f.health.workers).toHaveLength(2);
    }
    const latency = mergeEncoded(merged.flatMap((f) => f.histograms[HISTOGRAMS.messageLatency] ?? []));
    expect(latency.totalCount).toBe(400);
    expect(decodeHistogram(merged[0]!.histograms[HISTOGRAMS.wsConnect]!).totalCount).toBe(10);
  });

  it("aborting a run across 2 workers ends it within 1 s, with the partial frame merged and the target's connections closed", async () => {
    const server = await startWsEchoServer();
    cleanup.push(() => server.close());
    const workers = await pool(2);
    const merged: EngineFrame[] = [];
    const controller = new AbortController();
    const plan = echoPlan(server.url, {
      connections: { count: 20, rate: 1000 },
      scenario: { kind: "echo", message: { rate: 50, timeout: "5s" }, duration: "30s" },
    });
    const running = workers.run(plan, { startAt: Date.now() + 50, onFrame: (f) => merged.push(f), signal: controller.signal });
    await new Promise((r) => setTimeout(r, 1600));
    const abortedAt = performance.now();
    controller.abort("stopped by the test");
    const outcome = await running;
    const tookMs = performance.now() - abortedAt;
    expect(tookMs).toBeLessThan(1000);
    expect(outcome).toMatchObject({ status: "aborted", error: "stopped by the test" });
    expect(merged.map((f) => f.index)).toEqual(merged.map((_, k) => k));
    expect(merged.at(-1)!.durationMs).toBeLessThan(1000); // the partial interval up to the abort
    expect(total(merged, COUNTERS.sent)).toBe(outcome.totals.sent);
    expect(outcome.totals.opened).toBe(20);
    // Every worker closed its connections: the server sees none within a moment, and no message after.
    const deadline = performance.now() + 1000;
    while (server.connections() > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(server.connections()).toBe(0);
    const echoed = server.holdStats().count;
    await new Promise((r) => setTimeout(r, 300));
    expect(server.holdStats().count).toBe(echoed);
  });

  it("a plan far beyond the workers' capacity is flagged saturated by each worker and by the merged frame, with its send lag and shed slots", async () => {
    const target = await startPingTarget();
    cleanup.push(() => target.stop());
    const workers = await pool(2);
    const merged: EngineFrame[] = [];
    const controller = new AbortController();
    const plan = planSchema.parse(pingThroughputPlan(target.url));
    const running = workers.run(plan, { startAt: Date.now() + 50, onFrame: (f) => merged.push(f), signal: controller.signal });
    await new Promise((r) => setTimeout(r, 3500));
    const abortedAt = performance.now();
    controller.abort("enough");
    const outcome = await running;
    expect(performance.now() - abortedAt).toBeLessThan(1000);
    expect(outcome.status).toBe("aborted");
    const full = merged.filter((f) => f.durationMs === 1000 && f.index > 0);
    expect(full.length).toBeGreaterThanOrEqual(1);
    for (const f of full) {
      const perWorker = f.health.workers!;
      expect(perWorker).toHaveLength(2);
      // The worst worker flags the frame; the frame's readings are the worst of the workers'.
      expect(f.health.saturated).toBe(perWorker.some((w) => w.saturated));
      expect(f.health.sendLagMaxMs).toBe(Math.max(...perWorker.map((w) => w.sendLagMaxMs)));
      expect(f.health.cpu).toBe(Math.max(...perWorker.map((w) => w.cpu)));
    }
    expect(full.some((f) => f.health.saturated)).toBe(true);
    // 100 × 1,700/s is 170,000 slots a second: what could not go out was shed, counted, never silently skipped.
    expect(total(merged, COUNTERS.shed)).toBeGreaterThan(0);
    expect(outcome.totals.shed).toBe(total(merged, COUNTERS.shed));
    // Send lag is reported as it was: its histogram holds every sent and shed slot.
    const lag = mergeEncoded(merged.flatMap((f) => f.histograms[HISTOGRAMS.sendLag] ?? []));
    expect(lag.totalCount).toBe(total(merged, COUNTERS.sent) + total(merged, COUNTERS.shed));
    expect(lag.getValueAtPercentile(99) / 1000).toBeGreaterThan(10);
  }, 30_000);
});
