import { describe, expect, it } from "vitest";
import type { EndedShard } from "../coordination/run-coordinator";
import { decideOutcome, lossStopReason, startSkewMs } from "./run-outcome";

const ended = (status: EndedShard["status"], error: string | null = null): EndedShard => ({ status, error, frames: 1, agentId: "agt_a", agentName: "a" });
const failedThreshold = { expression: "latency.p95 < 200ms", ok: false, actual: 250, message: "latency.p95 = 250ms, limit < 200ms (off by 50ms)" };

describe("run outcome", () => {
  it("orders abort, run error, shard error, failed threshold, passed", () => {
    const shards = [{ index: 0, count: 1, ended: ended("errored", "connect refused: x") }];
    expect(decideOutcome({ abort: "user", runError: "deadline", shards, thresholds: [failedThreshold] })).toEqual({ status: "aborted", reason: "user" });
    expect(decideOutcome({ abort: null, runError: "deadline", shards, thresholds: [] })).toEqual({ status: "errored", reason: "deadline" });
    expect(decideOutcome({ abort: null, runError: null, shards, thresholds: [failedThreshold] })).toEqual({ status: "errored", reason: "connect refused: x" });
    const ok = [{ index: 0, count: 1, ended: ended("completed") }];
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [failedThreshold] })).toEqual({
      status: "failed",
      reason: failedThreshold.message,
    });
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [{ ...failedThreshold, ok: true }] })).toEqual({
      status: "passed",
      reason: null,
    });
  });

  it("a passed capacity search that ended at a step the agent limited says its capacity is a lower bound", () => {
    const ok = [{ index: 0, count: 1, ended: ended("completed") }];
    const capacity = {
      slo: "p95 <= 200ms",
      rate: 3800,
      per: "aggregate" as const,
      sendRate: 3790,
      deliveryRate: null,
      step: 18,
      lowerBound: true,
      agentSaturated: true,
      endedBy: "the step at 4000/s per aggregate was limited by the load generator, not the server (the agent was saturated in 2 of 3 s: CPU 97% > 90%)",
    };
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [], capacity })).toEqual({
      status: "passed",
      reason: `capacity at least 3800/s per aggregate, a lower bound: ${capacity.endedBy}; add agents and rerun`,
    });
    // A search the server itself ended, or that never broke, passes without a note.
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [], capacity: { ...capacity, agentSaturated: false } })).toEqual({
      status: "passed",
      reason: null,
    });
  });

  it("ends a capacity search none of whose steps could be judged inconclusive with the reason, never passed; a failed threshold still fails it", () => {
    const ok = [{ index: 0, count: 1, ended: ended("completed") }];
    const endedBy = "the step at 1000/s per aggregate was limited by the load generator, not the server (the agent was saturated in 3 of 3 s: CPU 99% > 90%)";
    const limited = {
      slo: "p95 <= 200ms",
      rate: null,
      per: "aggregate" as const,
      sendRate: null,
      deliveryRate: null,
      step: null,
      lowerBound: false,
      agentSaturated: true,
      endedBy,
    };
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [], capacity: limited })).toEqual({
      status: "inconclusive",
      reason: `no step of the capacity search could be judged: ${endedBy}; add agents (or start the sweep at a lower rate) and rerun`,
    });
    // Cut short before the first hold was over: nothing judged either.
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [], capacity: { ...limited, agentSaturated: false, endedBy: null } })).toEqual({
      status: "inconclusive",
      reason:
        "no step of the capacity search could be judged: the run ended before its first step's hold was over; give the run time for at least one whole step and rerun",
    });
    // A first step the server broke is a judgement (the capacity is below it); a failed threshold is one too.
    const broke = { ...limited, agentSaturated: false, endedBy: "the step at 1000/s per aggregate broke it: p95 312ms > 200ms" };
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [], capacity: broke }).status).toBe("passed");
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [failedThreshold], capacity: limited }).status).toBe("failed");
    // An error or abort still decides first.
    expect(decideOutcome({ abort: "user", runError: null, shards: ok, thresholds: [], capacity: limited }).status).toBe("aborted");
  });

  it("judges a run an abortOnFail threshold stopped as failed, not errored by the shards it stopped; a user abort still wins", () => {
    const stopped = [{ index: 0, count: 1, ended: ended("aborted", "threshold broke") }];
    const thresholdStop = 'threshold "latency.p95 < 200ms" broke (…); the run was stopped early (abortOnFail)';
    expect(decideOutcome({ abort: null, runError: null, shards: stopped, thresholds: [failedThreshold], thresholdStop })).toEqual({
      status: "failed",
      reason: thresholdStop,
    });
    expect(decideOutcome({ abort: "user", runError: null, shards: stopped, thresholds: [], thresholdStop }).status).toBe("aborted");
  });

  it("names the shard when one of several failed", () => {
    const shards = [
      { index: 0, count: 3, ended: ended("completed") },
      { index: 1, count: 3, ended: ended("errored", "agent b (agt_b) lost: gone") },
      { index: 2, count: 3, ended: ended("aborted", "hub shutting down") },
    ];
    expect(decideOutcome({ abort: null, runError: null, shards, thresholds: [] }).reason).toBe(
      "shard 2/3: agent b (agt_b) lost: gone; shard 3/3: aborted: hub shutting down",
    );
  });

  it("degrades only under onLoss degrade, only when every broken shard lost its agent and another completed", () => {
    const lost: EndedShard = { ...ended("errored", "agent b (agt_b) lost: gone"), lost: true };
    const shards = [
      { index: 0, count: 2, ended: ended("completed") },
      { index: 1, count: 2, ended: lost },
    ];
    expect(decideOutcome({ abort: null, runError: null, shards, thresholds: [], onLoss: "degrade" })).toEqual({
      status: "degraded",
      reason: "shard 2/2: agent b (agt_b) lost: gone; the other agents finished 1 of 2 shards (agents.onLoss: degrade)",
    });
    expect(decideOutcome({ abort: null, runError: null, shards, thresholds: [failedThreshold], onLoss: "degrade" }).reason).toMatch(
      /; thresholds on the reduced load: latency\.p95 = 250ms/,
    );
    expect(decideOutcome({ abort: null, runError: null, shards, thresholds: [] }).status).toBe("errored");
    // An agent's own error is not a loss; nor is a run where nobody finished.
    const ownError = [shards[0]!, { index: 1, count: 2, ended: ended("errored", "connect refused") }];
    expect(decideOutcome({ abort: null, runError: null, shards: ownError, thresholds: [], onLoss: "degrade" }).status).toBe("errored");
    const allLost = [
      { index: 0, count: 2, ended: lost },
      { index: 1, count: 2, ended: lost },
    ];
    expect(decideOutcome({ abort: null, runError: null, shards: allLost, thresholds: [], onLoss: "degrade" }).status).toBe("errored");
    expect(decideOutcome({ abort: "user", runError: null, shards, thresholds: [], onLoss: "degrade" }).status).toBe("aborted");
  });

  it("stops a started run on a lost agent unless onLoss is degrade", () => {
    const lost: EndedShard = { ...ended("errored", "agent b (agt_b) lost: gone"), lost: true };
    const running = [
      { index: 0, count: 2, ended: undefined },
      { index: 1, count: 2, ended: lost },
    ];
    expect(lossStopReason(running, undefined)).toBe(
      'shard 2/2: agent b (agt_b) lost: gone; the other agents were stopped (agents.onLoss: error; "degrade" would let them finish)',
    );
    expect(lossStopReason(running, "error")).not.toBeNull();
    expect(lossStopReason(running, "degrade")).toBeNull();
    expect(lossStopReason([{ index: 0, count: 1, ended: lost }], undefined)).toBe("agent b (agt_b) lost: gone");
    expect(lossStopReason([{ index: 0, count: 2, ended: ended("errored", "own") }, running[0]!], undefined)).toBeNull();
  });

  it("measures start skew from the shards' first intervals", () => {
    expect(startSkewMs([{ shardId: "a", index: 0, startedAt: 1000 }])).toBeNull();
    expect(
      startSkewMs([
        { shardId: "a", index: 0, startedAt: 1000 },
        { shardId: "b", index: 0, startedAt: 1004.5 },
        { shardId: "b", index: 1, startedAt: 2004 },
      ]),
    ).toBe(4.5);
  });
});
