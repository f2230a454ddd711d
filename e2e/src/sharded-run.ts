import { expect } from "vitest";
import * as hdr from "hdr-histogram-js";
import { COUNTERS, HISTOGRAMS, type Run, type RunAnalysis } from "@volley/contracts";
import { createDb, listFrames, listShards, type ShardRow } from "@volley/db";
import { api, type Stack } from "./stack-fixture";

/** The echo hold every sharded-run plan asks of its target: latency can never be below it. */
export const ECHO_DELAY_MS = 20;

/**
 * One echo plan over `agents` shards. 20 connections and 200 msg/s over three shards split
 * 7/7/6 connections, 70/70/60 msg/s: no even split to hide behind.
 */
export function shardedEchoPlan(name: string, targetUrl: string, agents: number) {
  return {
    name,
    target: { url: targetUrl, protocol: "ws" },
    connections: { count: 20, rate: 40 },
    scenario: { kind: "echo", message: { bytes: 64, rate: 200, per: "aggregate" }, duration: "4s" },
    thresholds: ["errors.rate < 1%"],
    agents: { count: agents },
  } as const;
}

type ShardedPlan = ReturnType<typeof shardedEchoPlan>;

/** ms with the summary's precision (µs histograms, rounded to 3 decimals). */
const ms = (us: number) => Math.round(us) / 1000;

/**
 * The exactness a run over several agents promises: shards that sum to the plan (one per agent),
 * merged counts equal to the sum over every stored frame, merged percentiles equal to those of the
 * union of every frame's histogram (decoded and added here with the library itself), and a
 * per-agent breakdown that adds up. Returns the shards and the breakdown for further checks.
 */
export async function expectExactSplitAndMerge(stack: Stack, run: Run, plan: ShardedPlan): Promise<{ shards: ShardRow[]; analysis: RunAnalysis }> {
  const s = run.summary!;
  const agentCount = plan.agents.count;
  const h = createDb(stack.databaseUrl, 1);
  try {
    // The shards: one per agent process, summing exactly to the plan.
    const shards = await listShards(h.db, run.id);
    expect(shards).toHaveLength(agentCount);
    expect(shards.every((sh) => sh.status === "completed")).toBe(true);
    expect(new Set(shards.map((sh) => sh.agentId)).size).toBe(agentCount);
    expect(shards.reduce((n, sh) => n + sh.plan.connections.count, 0)).toBe(plan.connections.count);
    expect(shards.reduce((n, sh) => n + sh.plan.connections.rate, 0)).toBe(plan.connections.rate);
    expect(shards.reduce((n, sh) => n + sh.plan.scenario.message.rate, 0)).toBe(plan.scenario.message.rate);
    if (agentCount === 3) expect(shards.map((sh) => sh.plan.connections.count).sort()).toEqual([6, 7, 7]);

    // Merged counts: exactly the sum over every stored frame of every shard.
    const frames = await listFrames(h.db, run.id);
    for (const sh of shards) expect(frames.filter((f) => f.shardId === sh.id).length, `frames of shard ${sh.index + 1}`).toBeGreaterThanOrEqual(4);
    const total = (name: string) => frames.reduce((n, f) => n + (f.counters[name] ?? 0), 0);
    expect(s.messages.sent).toBe(total(COUNTERS.sent));
    expect(s.messages.received).toBe(total(COUNTERS.received));
    expect(s.messages.sent).toBeGreaterThanOrEqual(600); // 200/s for 4 s from each connection's open, open-loop
    expect(s.messages.received).toBe(s.messages.sent);

    // Merged percentiles: the union of every frame's histogram (no warm-up in this plan, so every frame counts).
    const union = hdr.build({
      lowestDiscernibleValue: 1,
      highestTrackableValue: 3_600_000_000,
      numberOfSignificantValueDigits: 3,
      bitBucketSize: 64,
      autoResize: false,
      useWebAssembly: false,
    });
    for (const f of frames) {
      expect(f.warmup).toBe(false);
      const b64 = f.histograms[HISTOGRAMS.messageLatency];
      if (b64) union.add(hdr.decodeFromCompressedBase64(b64, 32, false));
    }
    expect(union.totalCount).toBe(s.latency.count);
    expect(union.totalCount).toBe(s.messages.received);
    expect({ p50: s.latency.p50, p95: s.latency.p95, p99: s.latency.p99, max: s.latency.max }).toEqual({
      p50: ms(union.getValueAtPercentile(50)),
      p95: ms(union.getValueAtPercentile(95)),
      p99: ms(union.getValueAtPercentile(99)),
      max: ms(union.maxValue),
    });
    expect(s.latency.min).toBeGreaterThanOrEqual(ECHO_DELAY_MS - 0.05); // the target holds every echo

    // Per agent: the shards' holders, whose sends add up to the total.
    const analysis = await api<RunAnalysis>(stack, "GET", `/api/v1/runs/${run.id}/analysis`);
    expect(analysis.status).toBe(200);
    const agents = analysis.body.agents;
    expect(agents.map((a) => a.agentId).sort()).toEqual(shards.map((sh) => sh.agentId).sort());
    expect(agents.reduce((n, a) => n + a.sent, 0)).toBe(s.messages.sent);
    expect(agents.reduce((n, a) => n + a.received, 0)).toBe(s.messages.received);
    for (const a of agents) expect(a.sent).toBeGreaterThan(0);

    // Every agent reported its actual start, under the name it was started with.
    const names = Array.from({ length: agentCount }, (_, i) => (i === 0 ? "e2e-agent" : `e2e-agent-${i + 1}`));
    expect(s.start!.shards.map((x) => x.agentName).sort()).toEqual(names.sort());
    return { shards, analysis: analysis.body };
  } finally {
    await h.close();
  }
}
