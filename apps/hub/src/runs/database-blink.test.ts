import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { getRunOfAnyOrg, listFrames, listShards } from "@volley/db";
import { DatabaseRelay } from "../test-support/database-relay";
import { startTargetsAndAgent, type RealAgent } from "../test-support/real-agent";
import { until } from "../test-support/until";
import { useHubHarness } from "../test-support/use-hub-harness";

/**
 * Issue 31 #3: PostgreSQL away for a few seconds as a run ends (a restart, a failover) must not
 * turn a run whose agent finished and whose every frame was stored into `errored` ("the hub
 * holding its shard stopped"). The hub reaches PostgreSQL through a relay the test cuts at three
 * moments of a run's end — its last second of sending, its shard's end arriving, and the run
 * being finalized — for longer than the orphan watch's grace; each run must pass with every
 * frame its agent reported stored and every message the target answered counted.
 */
let relay: DatabaseRelay | undefined;
afterAll(async () => {
  await relay?.close();
});
const h = useHubHarness(
  { storeWaitMs: 5000, agentGraceMs: 2000, orphanCheckMs: 500 },
  {
    async hubDatabaseUrl(url) {
      const started = await DatabaseRelay.start(url);
      relay = started.relay;
      return started.url;
    },
  },
);
afterAll(() => relay?.restore());

let real: RealAgent;
beforeAll(async () => {
  real = await startTargetsAndAgent(h.hubUrl, "blink", "blink");
});
afterAll(async () => {
  for (const p of real?.processes.reverse() ?? []) await p.stop(3000);
});
const tail = () => real.output.slice(-30).join("\n");

const SECONDS = 4;
const plan = () =>
  planSchema.parse({
    name: "database blink",
    target: { url: real.echoUrl, protocol: "ws" },
    connections: { count: 5, rate: 1000 },
    scenario: { kind: "echo", message: { bytes: 32, rate: 10 }, duration: `${SECONDS}s` },
    agents: { pool: "blink", count: 1 },
  });

/** When to cut, given the run's id: resolves at the moment of the run's end the case is about. */
const moments: [string, (runId: string) => Promise<unknown>][] = [
  // The shard's next-to-last second is stored: the agent is in its last second of sending.
  ["during the last second of sending", (runId) => until("frames stored", async () => (await listFrames(h.db.db, runId)).length >= SECONDS - 1, 30_000)],
  // Every second is stored: the agent is draining replies and its shard.end is next.
  ["as the shard's end arrives", (runId) => until("all frames stored", async () => (await listFrames(h.db.db, runId)).length >= SECONDS, 30_000)],
  // The shard's end is written: the run is being finalized.
  [
    "while the run is finalized",
    (runId) =>
      until(
        "shard ended",
        async () => {
          const shards = await listShards(h.db.db, runId);
          return shards.length > 0 && shards.every((s) => s.endedAt !== null);
        },
        30_000,
      ),
  ],
];

describe("PostgreSQL away at the end of a run", () => {
  it.each(moments)("%s: the run passes with every frame stored", async (_moment, reached) => {
    const runId = await h.startRun(plan());
    await reached(runId);
    relay!.drop();
    // Longer than the orphan watch's grace (2 s here) and its check period.
    await new Promise((r) => setTimeout(r, 6000));
    relay!.restore();

    const run = await h.waitForFinal(runId, 90_000);
    expect(run.status, `${run.reason}\n${tail()}`).toBe("passed");
    const [shard] = await listShards(h.db.db, runId);
    const frames = await listFrames(h.db.db, runId);
    expect(shard?.status).toBe("completed");
    expect(frames.length).toBe(shard?.frames);
    expect(run.summary?.messages.sent).toBe(5 * 10 * SECONDS);
    expect(run.summary?.messages.received).toBe(5 * 10 * SECONDS);
    expect((await getRunOfAnyOrg(h.db.db, runId))?.reason ?? null).toBeNull();
  }, 150_000);
});
