import { describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { runDeadlineMs, runLengthMs, type RunTiming } from "./run-execution";

const timing: RunTiming = {
  armTimeoutMs: 30_000,
  startLeadMs: 300,
  storeWaitMs: 15_000,
  storeDeadlineMs: 120_000,
  abortEndTimeoutMs: 10_000,
  thresholdCheckMs: 2000,
  agentGraceMs: 10_000,
  orphanCheckMs: 2000,
  endSlackMs: 30_000,
};

const base = {
  name: "deadline",
  target: { url: "ws://127.0.0.1:9001/echo", connectTimeout: "5s" },
  scenario: { kind: "echo", message: { rate: 1, timeout: "10s" }, duration: "1s" },
};

/** The hub's deadlines come from the plan's own timing (contracts planTiming), so no valid plan is cut short as "did not end". */
describe("run deadlines", () => {
  it("cover a plan's stages, however short its duration", () => {
    const staged = planSchema.parse({
      ...base,
      connections: {
        count: 10,
        stages: [
          { duration: "5m", target: 10 },
          { duration: "5m", target: 0 },
        ],
      },
    });
    expect(runLengthMs(staged)).toBe(10 * 60_000 + 5000 + 10_000);
    expect(runDeadlineMs(staged, timing)).toBeGreaterThan(10 * 60_000 + timing.endSlackMs);
  });

  it("cover a sweep's steps after the ramp and a per-connection window after the last open", () => {
    const sweep = planSchema.parse({
      ...base,
      connections: { count: 10, rate: 10 },
      scenario: { ...base.scenario, duration: "30s" },
      sweep: { step: 1, hold: "3s", gap: "1s" },
    });
    // Stepping begins on the first whole second after the ramp (1 s) and the slowest connect (5 s): 6 s, then 7 steps = 27 s.
    expect(runLengthMs(sweep)).toBe(6000 + 27_000 + 10_000);
    const echo = planSchema.parse({ ...base, connections: { count: 10, rate: 10 }, scenario: { ...base.scenario, duration: "30s" } });
    expect(runLengthMs(echo)).toBe(1000 + 5000 + 30_000 + 10_000);
  });
});
