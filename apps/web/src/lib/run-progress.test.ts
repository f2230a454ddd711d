import { describe, expect, it } from "vitest";
import { planSchema, type IntervalPoint, type PlanInput, type Run } from "@volley/contracts";
import { runProgress } from "./run-progress";

const T0 = Date.parse("2026-11-28T10:00:00Z");
const run = (plan: PlanInput, status: Run["status"] = "running"): Run => ({
  id: "run_1",
  status,
  reason: null,
  name: "p",
  plan: planSchema.parse(plan),
  createdAt: new Date(T0 - 5000).toISOString(),
  startedAt: new Date(T0 - 2000).toISOString(),
  endedAt: null,
  summary: null,
});
const echo: PlanInput = {
  name: "p",
  target: { url: "ws://127.0.0.1:9001/echo" },
  connections: { count: 10, rate: 100 },
  scenario: { kind: "echo", message: { rate: 5, timeout: "10s" }, duration: "60s" },
};
const first = { t: T0, index: 0 } as IntervalPoint;

describe("runProgress", () => {
  it("counts from the first stored second against the plan's sending time (ramp + duration)", () => {
    // 10 connections at 100/s ramp 0.1 s, then each sends 60 s: sending ends 60.1 s after the start.
    const p = runProgress(run(echo), [first], T0 + 30_000)!;
    expect(p.fraction).toBeCloseTo(30 / 60.1, 3);
    expect(p.text).toBe("30 s of 60 s · about 30 s left");
    expect(p.tail).toBe("then up to 10 s for the last replies");
  });

  it("says when sending is done and what it waits for", () => {
    const p = runProgress(run(echo), [first], T0 + 61_000)!;
    expect(p.fraction).toBe(1);
    expect(p.text).toBe("sending done after 60 s");
    expect(p.tail).toBe("waiting up to 10 s for the last replies");
  });

  it("users: arrivals, then the last users' time; before the first second, from the run's start", () => {
    const users = run({
      ...echo,
      connections: { count: 50 },
      scenario: { kind: "users", arrivalRate: 2, duration: "20s", maxUserTime: "30s" },
      flow: { steps: [{ connect: {} }] },
    });
    const p = runProgress(users, [], T0 + 8000)!;
    expect(p.text).toBe("10 s of 20 s · about 10 s left");
    expect(p.tail).toBe("then up to 30 s for the last users to finish");
  });

  it("nothing for runs that are not running", () => {
    expect(runProgress(run(echo, "queued"), [], T0)).toBeNull();
    expect(runProgress(run(echo, "passed"), [first], T0)).toBeNull();
  });
});
