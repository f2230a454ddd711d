import { describe, expect, it } from "vitest";
import type { ScriptedAgent } from "../test-support/scripted-agent";
import { useHubHarness } from "../test-support/use-hub-harness";
import { testFrame, testPlan } from "../test-support/fixtures";

// abortOnFail thresholds: the hub judges them on the frames stored so far and stops the run as failed.

const h = useHubHarness({ armTimeoutMs: 10_000, storeWaitMs: 5000, abortEndTimeoutMs: 3000, thresholdCheckMs: 200 });

/** An agent in its own pool that answers shard.abort like apps/agent does: shard.end aborted. */
const agent = (pool: string) => h.connect({ name: `aof-${pool}`, pool });

async function started(a: ScriptedAgent, runId: string) {
  const job = await a.until((r) => r.assign.find((j) => j.runId === runId), 10_000, "shard.assign");
  const start = await a.until((r) => r.start.find((s) => s.shardId === job.shardId), 10_000, "shard.start");
  return { ids: { runId, shardId: job.shardId, agentId: a.agentId }, start };
}

const slow = Array.from({ length: 20 }, () => 500);
const fast = Array.from({ length: 20 }, () => 20);
const p95Guard = { expression: "latency.p95 < 200ms", abortOnFail: true };

describe("abortOnFail thresholds", () => {
  it("stop a running run as failed, naming the threshold and by how much it broke", async () => {
    const a = await agent("aof-break");
    const runId = await h.startRun(testPlan({ agents: { pool: "aof-break" }, duration: "60s", thresholds: [p95Guard, "errors.rate < 1%"] }));
    const { ids, start } = await started(a, runId);
    expect(await a.sendFrame(testFrame(ids, 0, fast, { startedAt: start.startAt }))).toEqual({ ok: true });
    expect(await a.sendFrame(testFrame(ids, 1, slow, { startedAt: start.startAt + 1000 }))).toEqual({ ok: true });
    expect(await a.sendFrame(testFrame(ids, 2, slow, { startedAt: start.startAt + 2000 }))).toEqual({ ok: true });

    const abort = await a.until((r) => r.abort.find((x) => x.shardId === ids.shardId), 10_000, "shard.abort");
    expect(abort.reason).toMatch(/threshold "latency\.p95 < 200ms" broke/);
    await a.end({ runId, shardId: ids.shardId, status: "aborted", frames: 3 });

    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("failed");
    // p95 of 20 × 20 ms and 40 × 500 ms is 500 ms (HdrHistogram 3 digits: within 0.1 %).
    expect(run.reason).toMatch(
      /^threshold "latency\.p95 < 200ms" broke \(latency\.p95 = 50\d(\.\d+)?ms, limit < 200ms \(off by 30\d(\.\d+)?ms\)\); the run was stopped early \(abortOnFail\)$/,
    );
    // Far ahead of the planned 60 s: the run was stopped, and everything sent is kept.
    expect(run.summary?.messages.sent).toBe(60);
    expect(run.summary?.thresholds.find((t) => t.expression === "latency.p95 < 200ms")?.ok).toBe(false);
  });

  it("never judge warm-up alone, and let a run whose measured intervals hold pass", async () => {
    const a = await agent("aof-warm");
    const runId = await h.startRun(testPlan({ agents: { pool: "aof-warm" }, duration: "60s", thresholds: [p95Guard] }));
    const { ids, start } = await started(a, runId);
    expect(await a.sendFrame(testFrame(ids, 0, slow, { startedAt: start.startAt, warmup: true }))).toEqual({ ok: true });
    // Many check periods (200 ms) with only slow warm-up stored.
    await new Promise((r) => setTimeout(r, 2000));
    expect(a.received.abort).toHaveLength(0);
    expect(await a.sendFrame(testFrame(ids, 1, fast, { startedAt: start.startAt + 1000 }))).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 1000));
    expect(a.received.abort).toHaveLength(0);
    await a.end({ runId, shardId: ids.shardId, status: "completed", frames: 2 });
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("passed");
    expect(run.reason).toBeNull();
  });

  it("wait for `delay` after the start before judging; a plain string threshold never stops the run", async () => {
    const a = await agent("aof-delay");
    const runId = await h.startRun(
      testPlan({ agents: { pool: "aof-delay" }, duration: "60s", thresholds: ["latency.p99 < 100ms", { ...p95Guard, delay: "3s" }] }),
    );
    const { ids, start } = await started(a, runId);
    expect(await a.sendFrame(testFrame(ids, 0, slow, { startedAt: start.startAt }))).toEqual({ ok: true });
    const abort = await a.until((r) => r.abort.find((x) => x.shardId === ids.shardId), 15_000, "shard.abort");
    // Never before the delay (lateness under load is allowed; earliness is not).
    expect(abort.receivedAt - start.startAt).toBeGreaterThanOrEqual(3000);
    expect(abort.reason).not.toMatch(/p99/);
    await a.end({ runId, shardId: ids.shardId, status: "aborted", frames: 1 });
    const run = await h.waitForFinal(runId);
    expect(run.status).toBe("failed");
    expect(run.reason).toMatch(/^threshold "latency\.p95 < 200ms" broke/);
  });
});
