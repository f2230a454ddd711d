import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNTERS, REDIS_KEYS, planSchema, rateRequestSchema } from "@volley/contracts";
import { getRunOfAnyOrg, listFrames } from "@volley/db";
import { startTargetsAndAgent, type RealAgent } from "../test-support/real-agent";
import { useHubHarness } from "../test-support/use-hub-harness";

/**
 * A live rate change end to end below web: published on Redis as web publishes it, forwarded by the
 * hub to the real agent process running the shard (its engine worker threads), applied at the
 * change's instant. The run's stored seconds show the step, and every slot of the new schedule was
 * sent and answered (the sanity checks pass, nothing lost or shed).
 */
const h = useHubHarness({ storeWaitMs: 5000 });
let real: RealAgent;

beforeAll(async () => {
  real = await startTargetsAndAgent(h.hubUrl, "throttle", "rate");
});
afterAll(async () => {
  for (const p of real?.processes.reverse() ?? []) await p.stop(3000);
});

const tail = () => real.output.slice(-30).join("\n");

describe("live rate change", () => {
  it("reaches the agent running the shard, which triples its rate at the change's instant", async () => {
    const plan = planSchema.parse({
      name: "rate change",
      target: { url: real.echoUrl, protocol: "ws" },
      connections: { count: 4, rate: 1000 },
      scenario: { kind: "echo", message: { bytes: 32, rate: 10 }, duration: "5s" },
      agents: { pool: "rate", count: 1 },
    });
    const runId = await h.startRun(plan);
    // Once the shard sends (its first second stored), ask for ×3 from a second later, as web does.
    await expect.poll(async () => (await listFrames(h.db.db, runId)).length, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
    const at = Date.now() + 1000;
    await h.redis.publish(REDIS_KEYS.rate, JSON.stringify(rateRequestSchema.parse({ runId, scale: 3, at })));
    const run = await h.waitForFinal(runId, 60_000);
    expect(run.status, `${run.reason}\n${tail()}`).toBe("passed");
    expect(
      real.output.some((l) => /rate × 3/.test(l)),
      tail(),
    ).toBe(true);

    const frames = await listFrames(h.db.db, runId);
    const sent = (f: (typeof frames)[number]) => f.counters[COUNTERS.sent] ?? 0;
    const full = frames.filter((f) => f.durationMs >= 999 && (f.activeMs ?? f.durationMs) >= 999);
    const before = full.filter((f) => f.startedAt + f.durationMs <= at).map(sent);
    const after = full.filter((f) => f.startedAt >= at).map(sent);
    // 4 connections × 10/s before, × 30/s after: whole seconds on either side of the change.
    expect(before.length, tail()).toBeGreaterThan(0);
    expect(after.length, tail()).toBeGreaterThan(0);
    for (const n of before) expect(n).toBeLessThanOrEqual(41);
    for (const n of after) expect(n).toBeGreaterThanOrEqual(119);
    const total = frames.reduce((n, f) => n + sent(f), 0);
    expect(run.summary?.messages.sent).toBe(total);
    expect(run.summary?.messages.received).toBe(total);
    expect(run.summary?.messages.lost).toBe(0);
    expect((await getRunOfAnyOrg(h.db.db, runId))?.status).toBe("passed");
  }, 120_000);
});
