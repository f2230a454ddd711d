import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { createAgentToken, DEFAULT_ORG_ID, insertRun, listAudit, listFrames, schema } from "@volley/db";
import { enqueue, runJob } from "@volley/queue";
import { floodFrames } from "../test-support/abusive-agent";
import { testPlan } from "../test-support/fixtures";
import { startTargetsAndAgent, type RealAgent } from "../test-support/real-agent";
import type { ScriptedAgent } from "../test-support/scripted-agent";
import { useHubHarness } from "../test-support/use-hub-harness";

/**
 * Issue 31 #1: one org's misbehaving agent cannot take the shared hub from another org. Org A (the
 * default org) runs a real plan with the real agent against the real ws echo target while org B's
 * agents flood frames of dense histograms (the most decoding per byte), decompression bombs and
 * malformed ones. The agent budget is lowered (50 ms of decoding per second, 500 ms per window) so
 * a few dozen dense frames overdraw it long before the default byte budget on any CPU (maximal
 * frames raced the two: a fast CI machine hit the byte budget first), while 50 refused bombs stay far inside it on a busy machine; the rest are the defaults.
 */
const h = useHubHarness({ storeWaitMs: 5000, ingest: { agentMsPerS: 50 } });
let real: RealAgent;
const ORG_B = "org_abuser";
let tokenB: string;

beforeAll(async () => {
  real = await startTargetsAndAgent(h.hubUrl, "honest-a", "abuse-a");
  await h.db.db.insert(schema.orgs).values({ id: ORG_B, name: "Abuser" });
  tokenB = (await createAgentToken(h.db.db, { orgId: ORG_B, name: "abuse", pool: "abuse-b" })).secret;
}, 120_000);
afterAll(async () => {
  for (const p of real?.processes.reverse() ?? []) await p.stop(3000);
});

const tail = () => real.output.slice(-30).join("\n");

/** A run of org B on its pool, leased to `agent` once it is idle there; resolves with the shard once started. */
async function leasedRunB(agent: ScriptedAgent): Promise<{ runId: string; shardId: string }> {
  const run = await insertRun(h.db.db, { plan: testPlan({ agents: { pool: "abuse-b" }, duration: "60s" }), orgId: ORG_B });
  await enqueue(h.runs, runJob, { runId: run.id });
  const job = await agent.until((r) => r.assign.find((j) => j.runId === run.id), 15_000, "shard.assign");
  await agent.until((r) => r.start.find((s) => s.shardId === job.shardId), 15_000, "shard.start");
  return { runId: run.id, shardId: job.shardId };
}

describe("ingest budgets", () => {
  it("cuts off org B's flooding agents, naming the budget, while org A's run passes with the target's own count", async () => {
    const stats = `${real.echoUrl.replace(/^ws/, "http").replace(/\/echo$/, "")}/stats`;
    expect((await fetch(stats, { method: "DELETE" })).status).toBe(204);
    const plan = planSchema.parse({
      name: "honest org A",
      target: { url: real.echoUrl, protocol: "ws" },
      connections: { count: 4, rate: 1000 },
      scenario: { kind: "echo", message: { bytes: 32, rate: 20 }, duration: "6s" },
      agents: { pool: "abuse-a", count: 1 },
    });

    const b1Instance = `b-dense-${Date.now()}`;
    const b1 = await h.connect({ token: tokenB, name: "b-dense", instanceId: b1Instance });
    const shardB1 = await leasedRunB(b1);
    const b2 = await h.connect({ token: tokenB, name: "b-bombs" });
    const shardB2 = await leasedRunB(b2);
    // No lease at all: its frames are refused before anything in them is inflated.
    const b3 = await h.connect({ token: tokenB, name: "b-oversize" });

    const runA = await h.startRun(plan);
    await expect.poll(async () => (await listFrames(h.db.db, runA)).length, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
    const loop = monitorEventLoopDelay({ resolution: 20 });
    loop.enable();
    const [f1, f2, f3] = await Promise.all([
      floodFrames(b1, shardB1, { kinds: ["dense"], maxFrames: 1000 }),
      floodFrames(b2, shardB2, { kinds: ["malformed", "bomb", "malformed"], maxFrames: 500 }),
      floodFrames(b3, { runId: "run_not_yours", shardId: "shd_not_yours" }, { kinds: ["oversize"], maxFrames: 50, inFlight: 2 }),
    ]);
    loop.disable();

    // Each is cut off, told why (the budget and the setting that sets it), and disconnected.
    expect(f1.cutOff, f1.refusals.join("\n")).toMatch(
      /^agent cut off by the hub for 60 s: its frames cost the hub more than HUB_INGEST_AGENT_MS_PER_S=50 ms of checking and decoding per second \(averaged over HUB_INGEST_WINDOW_S=10 s\); .*raise HUB_INGEST_AGENT_MS_PER_S$/,
    );
    expect(f2.cutOff, f2.refusals.join("\n")).toMatch(
      /^agent cut off by the hub for 60 s: more than HUB_INGEST_MAX_REFUSED_FRAMES=50 of its frames were refused within HUB_INGEST_WINDOW_S=10 s \(the last: invalid frame: histograms\.message\.latency\.(bomb|bad): encoded histogram refused: .*\)/,
    );
    // 50 and what the window refilled while they came (5 a second), a few in flight: far from the 500 it would send.
    expect(f2.sent).toBeLessThan(100);
    expect(f3.cutOff, f3.refusals.join("\n")).toMatch(/^agent cut off by the hub for 60 s: it sent more than HUB_INGEST_AGENT_BYTES_PER_S=4194304 bytes/);
    expect(f3.refusals[0]).toMatch(/^invalid frame: its histograms total \d+ bytes encoded, over HUB_MAX_FRAME_HISTOGRAM_BYTES=1048576$/);
    for (const f of [f1, f2, f3]) expect(f.disconnected).toBe("io server disconnect");
    // Its reconnects are refused with the same reason while the cut-off lasts.
    await expect(h.connect({ token: tokenB, name: "b-dense", instanceId: b1Instance })).rejects.toThrow(
      /^agent cut off by the hub for 60 s: its frames cost the hub more than HUB_INGEST_AGENT_MS_PER_S=50 .*\(refused for another \d+(\.\d)? s\)$/,
    );

    // B's shards error with the reason; the audit log of org B names each agent.
    for (const { runId } of [shardB1, shardB2]) {
      const run = await h.waitForFinal(runId, 30_000);
      expect(run.status).toBe("errored");
      expect(run.reason).toMatch(/agent cut off by the hub for 60 s: .*HUB_INGEST_(AGENT_MS_PER_S|MAX_REFUSED_FRAMES)=/);
    }
    const actors = new Set([b1, b2, b3].map((b) => `agent:${b.agentId}`));
    const audit = (await listAudit(h.db.db, ORG_B)).filter((e) => e.action === "agent.ingest_cut_off" && actors.has(e.actor));
    expect(audit.map((e) => [e.actor, e.runId]).sort()).toEqual(
      [
        [`agent:${b1.agentId}`, shardB1.runId],
        [`agent:${b2.agentId}`, shardB2.runId],
        [`agent:${b3.agentId}`, null],
      ].sort(),
    );

    // Org A: untouched, every message the target echoed counted exactly.
    const runRow = await h.waitForFinal(runA, 60_000);
    expect(runRow.status, `${runRow.reason}\n${tail()}`).toBe("passed");
    const echoed = ((await (await fetch(stats)).json()) as { hold: { count: number } }).hold.count;
    expect(echoed).toBeGreaterThan(0);
    expect(runRow.summary?.messages.sent).toBe(echoed);
    expect(runRow.summary?.messages.received).toBe(echoed);
    expect(runRow.summary?.messages.lost).toBe(0);
    expect((await listAudit(h.db.db, DEFAULT_ORG_ID)).filter((e) => e.action === "agent.ingest_cut_off")).toEqual([]);
    // A generous sanity bound, not a timing assertion: the flood never held this process's loop for a second.
    expect(loop.max / 1e6).toBeLessThan(1000);
  }, 180_000);
});
