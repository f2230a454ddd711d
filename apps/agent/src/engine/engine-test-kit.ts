import { expect } from "vitest";
import { COUNTERS, HISTOGRAMS, planSchema, type Plan, type PlanInput } from "@volley/contracts";
import { mergeEncoded, summarizeRun } from "@volley/metrics";
import { runShard } from "./run-shard";
import { shardPreflight } from "./shard-preflight";
import type { EngineFrame } from "./types";

/** A counter summed over every frame of a shard. */
export function total(frames: readonly EngineFrame[], counter: string): number {
  return frames.reduce((n, f) => n + (f.counters[counter] ?? 0), 0);
}

/**
 * The echo scenario end to end over one protocol, as every protocol's engine test runs it:
 * 10 connections × 10 msg/s for 2 s against a hold of at least `minP50Ms` asked of the server.
 * Bounds are loose on purpose: replies are late on a busy machine, never early.
 */
export async function echoRun(target: PlanInput["target"], minP50Ms = 20): Promise<void> {
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
  // Only "not stuck behind a timeout": long-polling adds a request cycle to every reply, and this
  // machine runs other suites at the same time.
  expect(latency.getValueAtPercentile(50) / 1000).toBeLessThan(1000);
  expect(frames[0]!.histograms[HISTOGRAMS.wsConnect]).toBeDefined();
}

/** A sweep over an echo server: 4 connections, an aggregate rate the sweep steps, 20 s at most. */
export function sweepPlan(url: string, sweep: PlanInput["sweep"], message: Partial<PlanInput["scenario"]["message"]> = {}): Plan {
  return planSchema.parse({
    name: "sweep",
    target: { url, connectTimeout: "2s" },
    connections: { count: 4, rate: 200 },
    scenario: { kind: "echo", message: { rate: 1, per: "aggregate", timeout: "5s", ...message }, duration: "20s" },
    sweep,
  } satisfies PlanInput);
}

/** Runs a sweep plan in this process as one shard: its outcome, frames, and the summary of those frames. */
export async function runSweep(plan: Plan, onFrame?: (f: EngineFrame) => void) {
  expect(shardPreflight(plan, { maxConnections: 100 })).toBeUndefined();
  const frames: EngineFrame[] = [];
  const outcome = await runShard(plan, {
    startAt: Date.now() + 50,
    onFrame: (f) => {
      frames.push(f);
      onFrame?.(f);
    },
  });
  return { outcome, frames, summary: summarizeRun(frames, [], plan) };
}
