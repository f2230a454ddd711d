import { COUNTERS, HISTOGRAMS, planSchema, type IntervalFrame, type Plan, type PlanInput } from "@volley/contracts";
import { IntervalRecorder } from "@volley/metrics";

/**
 * A valid plan with the given overrides (shallow per section), defaults filled by the schema. The
 * default sanity checks are off unless asked for: scripted agents end most shards without measuring
 * anything, and these tests are about orchestration (the checks are tested in packages/metrics and
 * end to end).
 */
export function testPlan(
  overrides: {
    name?: string;
    connections?: Partial<PlanInput["connections"]>;
    message?: Partial<PlanInput["scenario"]["message"]>;
    agents?: Partial<NonNullable<PlanInput["agents"]>>;
    thresholds?: PlanInput["thresholds"];
    duration?: string;
    sanity?: PlanInput["sanity"];
  } = {},
): Plan {
  return planSchema.parse({
    name: overrides.name ?? "hub test",
    target: { url: "ws://127.0.0.1:9/echo", protocol: "ws" },
    connections: { count: 10, rate: 100, ...overrides.connections },
    scenario: { kind: "echo", message: { bytes: 64, rate: 10, ...overrides.message }, duration: overrides.duration ?? "2s" },
    thresholds: overrides.thresholds ?? [],
    sanity: overrides.sanity ?? false,
    agents: { pool: "default", count: 1, ...overrides.agents },
  });
}

export const testHealth = { cpu: 5, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 80, sendLagMaxMs: 0, saturated: false };

/** One interval frame whose latency histogram holds `latenciesMs`, each counted as one sent and received message. */
export function testFrame(
  ids: { runId: string; shardId: string; agentId: string },
  seq: number,
  latenciesMs: number[],
  opts: { startedAt?: number; warmup?: boolean } = {},
): IntervalFrame {
  const r = new IntervalRecorder();
  for (const ms of latenciesMs) {
    r.recordMicros(HISTOGRAMS.messageLatency, ms * 1000);
    r.increment(COUNTERS.sent);
    r.increment(COUNTERS.received);
  }
  r.setGauge(COUNTERS.connectionsActive, 1);
  return {
    ...ids,
    seq,
    index: seq,
    startedAt: opts.startedAt ?? Date.now() + seq * 1000,
    durationMs: 1000,
    warmup: opts.warmup ?? false,
    ...r.take(),
    health: testHealth,
  };
}
