import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, runSummarySchema, type Plan } from "@volley/contracts";
import type { FrameLike } from "./aggregate";
import { IntervalRecorder } from "./interval-recorder";
import { summarizeRun } from "./summarize-run";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };
const echo = {
  scenario: { kind: "echo", message: { bytes: 64, rate: 1, per: "connection", arrival: "constant", timeout: "10s" }, duration: "1s", warmup: 0 },
} as unknown as Pick<Plan, "scenario">;

function frame(fill: (r: IntervalRecorder) => void): FrameLike {
  const r = new IntervalRecorder();
  fill(r);
  return { index: 0, startedAt: 0, durationMs: 1000, warmup: false, ...r.take(), health };
}

const echoed = (sent: number, received: number) =>
  frame((r) => {
    r.increment(COUNTERS.connectionsOpened, 1);
    r.increment(COUNTERS.sent, sent);
    r.increment(COUNTERS.received, received);
    r.increment(COUNTERS.lost, sent - received);
    for (let i = 0; i < received; i++) r.recordMicros(HISTOGRAMS.messageLatency, 1000);
  });

const sanityOf = (frames: FrameLike[], sanity?: Plan["sanity"]) => {
  const s = runSummarySchema.parse(summarizeRun(frames, [], { ...echo, sanity }));
  return s.thresholds.filter((t) => t.kind === "sanity");
};

const usersRan = (started: number, completed: number, failedAt?: string) =>
  frame((r) => {
    r.increment(COUNTERS.usersStarted, started);
    r.increment(COUNTERS.usersCompleted, completed);
    r.increment(COUNTERS.usersFailed, started - completed);
    if (failedAt) r.increment(`errors.step.${failedAt}`, started - completed);
    for (let i = 0; i < completed; i++) r.recordMicros(`step.login`, 2000);
  });

describe("default sanity checks", () => {
  it("judge users runs by users that finished and failed, naming the failing steps (HTTP users send no messages)", () => {
    expect(sanityOf([usersRan(20, 20)]).map((t) => [t.expression, t.ok])).toEqual([
      ["sanity: users completed > 0", true],
      ["sanity: users failed <= 5%", true],
    ]);
    const failed = sanityOf([usersRan(20, 0, "order")]).filter((t) => !t.ok);
    expect(failed.map((t) => t.message)).toEqual([
      expect.stringMatching(/^sanity check: no user finished its steps \(20 started, 0 dropped; failed steps: order 20\)/),
      expect.stringMatching(/^sanity check: 100% of users failed \(20 of 20; failed steps: order 20\)/),
    ]);
  });

  it("fail a run that lost every message, saying what came back and how to turn them off", () => {
    const failed = sanityOf([echoed(100, 0)]).filter((t) => !t.ok);
    expect(failed.map((t) => t.message)).toEqual([
      expect.stringMatching(/^sanity check: nothing came back from the target \(100 sent, 0 replies or deliveries\).*sanity: false/),
      expect.stringMatching(/^sanity check: 100% of the replies and deliveries due were lost \(100 of 100\), over the 5% limit/),
    ]);
  });

  it("fail a run that sent nothing, naming the connection errors", () => {
    const none = frame((r) => {
      r.increment(COUNTERS.connectionsFailed, 3);
      r.increment("errors.refused", 3);
    });
    const failed = sanityOf([none]).filter((t) => !t.ok);
    expect(failed.map((t) => t.message)).toEqual([expect.stringMatching(/^sanity check: no message was sent \(3 connection attempts failed: refused 3\)/)]);
    // Nothing sent: "received > 0" and "loss" are not judged, rather than shown passed beside 0 received.
    expect(sanityOf([none]).map((t) => t.expression)).toEqual(["sanity: messages sent > 0"]);
  });

  it("pass a healthy run, judge loss against the plan's limit, and stay out of the way when turned off", () => {
    expect(sanityOf([echoed(1000, 990)]).every((t) => t.ok)).toBe(true);
    expect(sanityOf([echoed(1000, 990)], { maxLossPercent: 0.5 }).filter((t) => !t.ok)).toHaveLength(1);
    expect(sanityOf([echoed(100, 0)], false)).toEqual([]);
  });

  it("count messages a saturated agent shed as lost, and say so", () => {
    const shedding = frame((r) => {
      r.increment(COUNTERS.connectionsOpened, 1);
      r.increment(COUNTERS.sent, 100);
      r.increment(COUNTERS.received, 100);
      r.increment(COUNTERS.shed, 900);
      for (let i = 0; i < 100; i++) r.recordMicros(HISTOGRAMS.messageLatency, 1000);
    });
    const failed = sanityOf([shedding]).filter((t) => !t.ok);
    expect(failed.map((t) => t.message)).toEqual([
      expect.stringMatching(/^sanity check: 90% .*\(900 of 1000, 900 of them shed by a saturated agent: add agents or lower the rate\)/),
    ]);
  });

  it("blame the agent's saturation only when it shed or flagged itself saturated, not when it was stopped", () => {
    const at = (index: number, f: FrameLike, h: Partial<FrameLike["health"]> = {}, agentId = "agt_a"): FrameLike => ({
      ...f,
      index,
      agentId,
      health: { ...f.health, ...h },
    });
    const shedding = (sent: number, received: number, shed: number) =>
      frame((r) => {
        r.increment(COUNTERS.connectionsOpened, 1);
        r.increment(COUNTERS.sent, sent);
        r.increment(COUNTERS.received, received);
        r.increment(COUNTERS.lost, sent - received);
        r.increment(COUNTERS.shed, shed);
        for (let i = 0; i < received; i++) r.recordMicros(HISTOGRAMS.messageLatency, 1000);
      });
    const lossOf = (frames: FrameLike[]) => sanityOf(frames).find((t) => !t.ok && t.expression.startsWith("sanity: loss"))?.message;

    // Frozen 13 s (SIGSTOP): one interval's event loop stalled 13 s; what fell due meanwhile was shed on waking.
    const frozen = lossOf([
      at(0, echoed(100, 100)),
      at(1, shedding(50, 20, 900), { eventLoopDelayMs: { p50: 1, max: 13_000 }, saturated: true }),
      at(2, echoed(100, 100)),
    ]);
    expect(frozen).toMatch(
      /an agent stopped running for up to 13 s \(its process was paused or blocked, not overloaded\), and 900 of them were shed when it resumed, too late to send: check the agent's host/,
    );
    expect(frozen).not.toMatch(/saturated/);

    // Really overloaded: shedding with a responsive event loop.
    expect(lossOf([at(0, shedding(100, 100, 900), { saturated: true })])).toMatch(/900 of them shed by a saturated agent: add agents or lower the rate/);

    // Flagged saturated, nothing shed: said as a possibility, with its count.
    expect(lossOf([at(0, echoed(100, 50), { saturated: true, cpu: 99 }), at(1, echoed(100, 100))])).toMatch(
      /\(50 of 200, an agent reported itself saturated in 1 interval, which may have delayed replies/,
    );

    // A healthy agent and a lossy target: the loss is stated, no agent is blamed.
    const target = lossOf([at(0, echoed(100, 50)), at(1, echoed(100, 50))]);
    expect(target).toMatch(/\(100 of 200\), over the 5% limit/);
    expect(target).not.toMatch(/agent/);

    // One agent's frames stop two seconds before the other's: said, alongside the loss.
    const silent = lossOf([
      at(0, echoed(100, 50)),
      at(0, echoed(100, 100), {}, "agt_b"),
      at(1, echoed(100, 100), {}, "agt_b"),
      at(2, echoed(100, 100), {}, "agt_b"),
      at(3, echoed(100, 100), {}, "agt_b"),
    ]);
    expect(silent).toMatch(/agent agt_a stopped reporting \(2 intervals missing\)/);
    expect(silent).not.toMatch(/agt_b|saturated/);
  });

  it("count deliveries for scenarios without round trips (groups)", () => {
    const groups = frame((r) => {
      r.increment(COUNTERS.connectionsOpened, 4);
      r.increment(COUNTERS.sent, 4497);
      r.increment(COUNTERS.deliveriesExpected, 13_490);
      r.increment(COUNTERS.deliveriesReceived, 13_490);
      r.recordMicros(HISTOGRAMS.deliveryLatency, 2000);
    });
    const s = runSummarySchema.parse(
      summarizeRun([groups], ["delivery.ratio > 99%", "delivery.p95 < 200ms", "latency.p95 < 1s"], { ...echo, sanity: undefined }),
    );
    expect(s.thresholds.filter((t) => t.kind === "sanity").every((t) => t.ok)).toBe(true);
    const [ratio, p95, roundTrip] = s.thresholds;
    expect(ratio).toMatchObject({ ok: true, actual: 100 });
    expect(p95).toMatchObject({ ok: true });
    expect(p95!.actual).toBeCloseTo(2, 1);
    // No round trips were timed: a latency threshold is "not measured", never a pass on 0 ms.
    expect(roundTrip).toMatchObject({ ok: false, actual: null, message: "latency.p95 was not measured" });
  });
});
