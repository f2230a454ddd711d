import { describe, expect, it } from "vitest";
import { planSchema, type Plan } from "./plan";
import { planTiming, sweepBeginMs } from "./plan-timing";

function plan(
  over: {
    connections?: Record<string, unknown>;
    scenario?: Record<string, unknown>;
    message?: Record<string, unknown>;
    sweep?: Record<string, unknown>;
    flow?: Record<string, unknown>;
    target?: Record<string, unknown>;
  } = {},
): Plan {
  return planSchema.parse({
    name: "t",
    target: { url: "ws://127.0.0.1:9001/echo", connectTimeout: "2s", ...over.target },
    connections: { count: 10, rate: 5, ...over.connections },
    scenario: { kind: "echo", duration: "30s", message: { rate: 2, timeout: "3s", ...over.message }, ...over.scenario },
    ...(over.sweep ? { sweep: over.sweep } : {}),
    ...(over.flow ? { flow: over.flow } : {}),
  });
}

describe("planTiming", () => {
  it("per connection: ramp, then each connection's whole window; a late open and the drain bound the end", () => {
    const t = planTiming(plan());
    expect(t).toMatchObject({
      rampMs: 2000,
      durationMs: 30_000,
      sendEndMs: 32_000,
      openWithinMs: 2000,
      drainMs: 3000,
      endByMs: 37_000,
      stages: [],
      sweep: null,
    });
  });

  it("per aggregate: one window of duration from the first open, never ending before the ramp", () => {
    expect(planTiming(plan({ message: { per: "aggregate" } }))).toMatchObject({ sendEndMs: 30_000, endByMs: 2000 + 30_000 + 3000 });
    // A ramp longer than the window: every connection is still attempted.
    const slow = planTiming(plan({ connections: { count: 100, rate: 2 }, message: { per: "aggregate" } }));
    expect(slow.sendEndMs).toBe(50_000);
    expect(slow.endByMs).toBe(52_000 + 3000);
  });

  it("stages: the stages' total, whatever duration says", () => {
    const t = planTiming(
      plan({
        connections: {
          count: 10,
          stages: [
            { duration: "20s", target: 10 },
            { duration: "40s", target: 10 },
            { duration: "10s", target: 0 },
          ],
        },
        scenario: { duration: "5s" },
      }),
    );
    expect(t.rampMs).toBe(0);
    expect(t.stages).toEqual([
      { startMs: 0, endMs: 20_000, from: 0, target: 10 },
      { startMs: 20_000, endMs: 60_000, from: 10, target: 10 },
      { startMs: 60_000, endMs: 70_000, from: 10, target: 0 },
    ]);
    expect(t.sendEndMs).toBe(70_000);
    expect(t.endByMs).toBe(70_000 + 2000 + 3000);
  });

  it("sweep: stepping begins on the first whole second after the ramp; only steps whose hold fits in duration", () => {
    const t = planTiming(plan({ connections: { count: 3, rate: 2 }, scenario: { duration: "10s" }, sweep: { step: 1, hold: "3s", gap: "1s", steps: 20 } }));
    // Holds at 0 and 4 s fit in 10 s; a third at 8 s would end at 11 s.
    expect(t.sweep).toMatchObject({ holdMs: 3000, gapMs: 1000, periodMs: 4000, rates: [2, 3], lengthMs: 7000 });
    expect(t.sendEndMs).toBe(sweepBeginMs(1500) + 7000);
    expect(t.sendEndMs).toBe(9000);
    expect(t.endByMs).toBe(sweepBeginMs(1500 + 2000) + 7000 + 3000);
    // No step fitting at all is refused when the plan is validated, not planned as an empty sweep.
    expect(() => plan({ scenario: { duration: "2s" }, sweep: { step: 1, hold: "3s" } })).toThrow(/shorter than one sweep step/);
  });

  it("sweep: each step's warm-up comes before its hold and counts toward duration; retries may use every slot", () => {
    // Slots of 1 s warm-up + 2 s hold every 4 s: three fit in 11 s (the third sends over 8-11 s).
    const sweep = { step: 1, hold: "2s", gap: "1s", warmup: "1s", steps: 2 };
    const t = planTiming(plan({ connections: { count: 1, rate: 10 }, scenario: { duration: "11s" }, sweep }));
    expect(t.sweep).toMatchObject({ warmupMs: 1000, holdMs: 2000, periodMs: 4000, slots: 3, rates: [2, 3], lengthMs: 7000 });
    const retrying = planTiming(plan({ connections: { count: 1, rate: 10 }, scenario: { duration: "11s" }, sweep: { ...sweep, onSaturated: "retry" } }));
    expect(retrying.sweep).toMatchObject({ slots: 3, rates: [2, 3], lengthMs: 11_000 });
    expect(retrying.sendEndMs).toBe(sweepBeginMs(100) + 11_000);
  });

  it("a flow's setup steps count towards how late a connection may open", () => {
    const t = planTiming(
      plan({
        target: { url: "http://127.0.0.1:9002", protocol: "socketio" },
        flow: {
          setup: [{ request: { url: "/login", method: "POST" } }, { think: "1s" }, { connect: {} }, { waitFor: { event: "ready", timeout: "4s" } }],
          messages: [{ event: "echo", json: { n: 1 } }],
        },
      }),
    );
    expect(t.openWithinMs).toBe(3 * 2000 + 1000 + 2000 + 4000);
  });
});
