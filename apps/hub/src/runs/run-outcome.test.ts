import { describe, expect, it } from "vitest";
import type { EndedShard } from "../coordination/run-coordinator";
import { decideOutcome, startSkewMs } from "./run-outcome";

const ended = (status: EndedShard["status"], error: string | null = null): EndedShard => ({ status, error, frames: 1, agentId: "agt_a", agentName: "a" });
const failedThreshold = { expression: "latency.p95 < 200ms", ok: false, actual: 250, message: "latency.p95 = 250ms, limit < 200ms (off by 50ms)" };

describe("run outcome", () => {
  it("orders abort, run error, shard error, failed threshold, passed", () => {
    const shards = [{ index: 0, count: 1, ended: ended("errored", "connect refused: x") }];
    expect(decideOutcome({ abort: "user", runError: "deadline", shards, thresholds: [failedThreshold] })).toEqual({ status: "aborted", reason: "user" });
    expect(decideOutcome({ abort: null, runError: "deadline", shards, thresholds: [] })).toEqual({ status: "errored", reason: "deadline" });
    expect(decideOutcome({ abort: null, runError: null, shards, thresholds: [failedThreshold] })).toEqual({ status: "errored", reason: "connect refused: x" });
    const ok = [{ index: 0, count: 1, ended: ended("completed") }];
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [failedThreshold] })).toEqual({ status: "failed", reason: failedThreshold.message });
    expect(decideOutcome({ abort: null, runError: null, shards: ok, thresholds: [{ ...failedThreshold, ok: true }] })).toEqual({ status: "passed", reason: null });
  });

  it("names the shard when one of several failed", () => {
    const shards = [
      { index: 0, count: 3, ended: ended("completed") },
      { index: 1, count: 3, ended: ended("errored", "agent b (agt_b) lost: gone") },
      { index: 2, count: 3, ended: ended("aborted", "hub shutting down") },
    ];
    expect(decideOutcome({ abort: null, runError: null, shards, thresholds: [] }).reason).toBe("shard 2/3: agent b (agt_b) lost: gone; shard 3/3: aborted: hub shutting down");
  });

  it("measures start skew from the shards' first intervals", () => {
    expect(startSkewMs([{ shardId: "a", index: 0, startedAt: 1000 }])).toBeNull();
    expect(startSkewMs([{ shardId: "a", index: 0, startedAt: 1000 }, { shardId: "b", index: 0, startedAt: 1004.5 }, { shardId: "b", index: 1, startedAt: 2004 }])).toBe(4.5);
  });
});
