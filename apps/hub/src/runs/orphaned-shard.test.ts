import { afterAll, describe, expect, it } from "vitest";
import type { ShardJob } from "@volley/contracts";
import { listShards } from "@volley/db";
import { freePort, startApp, type ManagedProcess } from "@volley/devstack";
import { TEST_AGENT_TOKEN } from "../test-support/hub-harness";
import { testPlan } from "../test-support/fixtures";
import { useHubHarness } from "../test-support/use-hub-harness";

/**
 * A hub process holding a shard is killed (SIGKILL) and its agent never reconnects: nobody is left
 * to see the agent go. The run's supervisor (this in-process hub, or, when the dead hub ran the
 * run job, this hub once it recovers that job) finds the shard held by no live hub and ends it as
 * lost within the grace period, instead of waiting for the run's deadline (plan length + 30 s).
 */
const h = useHubHarness({ armTimeoutMs: 15_000, agentGraceMs: 1000, orphanCheckMs: 200, abortEndTimeoutMs: 2000, storeWaitMs: 3000 });
const output: string[] = [];
let doomed: ManagedProcess | undefined;

afterAll(async () => {
  await doomed?.stop(2000);
});

describe("a hub killed while holding a shard whose agent never comes back", () => {
  // Hub start-up, then up to a 30 s recovery of the run job and the grace: past the default 60 s.
  it("errors the run naming the agent within the hold mark's life and the grace period, not at the run's deadline", async () => {
    const port = await freePort();
    const env = {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      REDIS_URL: h.redisUrl,
      HUB_PORT: String(port),
      AGENT_TOKEN: TEST_AGENT_TOKEN,
      LOG_LEVEL: "info",
    };
    doomed = startApp("hub", env, (l) => output.push(`[doomed hub] ${l}`));
    await doomed.waitFor(/hub listening/, 90_000);
    const agent = await h.connect({ hubUrl: `http://127.0.0.1:${port}`, name: "orphaned", pool: "orphans" });

    // Two minutes of load: its deadline (2 min 30 s) is far beyond what the test waits.
    const runId = await h.startRun(testPlan({ agents: { pool: "orphans", count: 1 }, duration: "120s" }));
    const job = (await agent.until((r) => r.assign.find((j: ShardJob) => j.runId === runId), 15_000, "shard.assign"))!;
    await agent.nextStart();

    doomed.child.kill("SIGKILL");
    await doomed.exited;
    const killedAt = Date.now();
    // The agent keeps trying the dead hub's address: it never reaches a live hub again.
    const run = await h.waitForFinal(runId, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${output.slice(-30).join("\n")}`);
    });
    const tookMs = Date.now() - killedAt;

    expect(run.status).toBe("errored");
    expect(run.reason).toBe(`agent orphaned (${agent.agentId}) lost: the hub holding its shard stopped and the agent did not reconnect within 1 s`);
    // The dead hub's hold mark lapses within 15 s; a run job it held is recovered within 15–30 s.
    expect(tookMs).toBeLessThan(60_000);
    expect((await listShards(h.db.db, runId)).find((s) => s.id === job.shardId)).toMatchObject({ status: "errored" });
  }, 120_000);
});
