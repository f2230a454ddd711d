import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { planSchema } from "@volley/contracts";
import { createDb, type DbHandle } from "../client";
import { createTestDatabase } from "../test-database";
import { finishRun, getRun, insertRun, markRunRunning, restateRun } from "./runs-repo";
import { insertShards, listShards, updateShard } from "./shards-repo";

const SERVER = inject("databaseServerUrl");
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;

beforeAll(async () => {
  testDb = await createTestDatabase(SERVER);
  h = createDb(testDb.url);
});
afterAll(async () => {
  await h?.close();
  await testDb?.drop();
});

const plan = planSchema.parse({
  name: "lifecycle",
  target: { url: "ws://127.0.0.1:1/echo" },
  connections: { count: 1 },
  scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
});

/** The writes the hub makes go through contracts' SHARD_LIFECYCLE and RUN_LIFECYCLE: a move they do not list changes nothing. */
describe("lifecycle guards on the rows", () => {
  it("moves a shard forward only, and keeps its first end", async () => {
    const run = await insertRun(h.db, { plan });
    const [shard] = await insertShards(h.db, run.id, [plan]);
    const status = async () => (await listShards(h.db, run.id))[0]!.status;

    expect(await updateShard(h.db, shard!.id, { status: "running", startedAt: new Date() })).toBe(false);
    expect(await status()).toBe("pending");
    expect(await updateShard(h.db, shard!.id, { status: "assigned", agentId: null })).toBe(true);
    expect(await updateShard(h.db, shard!.id, { status: "running", startedAt: new Date() })).toBe(true);
    expect(await updateShard(h.db, shard!.id, { status: "completed", frames: 3, endedAt: new Date() })).toBe(true);
    // A late stand-down or orphan check does not overwrite the end the agent reported.
    expect(await updateShard(h.db, shard!.id, { status: "errored", error: "agent lost", endedAt: new Date() })).toBe(false);
    expect(await updateShard(h.db, shard!.id, { status: "assigned" })).toBe(false);
    expect((await listShards(h.db, run.id))[0]).toMatchObject({ status: "completed", error: null, frames: 3 });
    // A patch without a status is no move.
    expect(await updateShard(h.db, shard!.id, { frames: 4 })).toBe(true);
  });

  it("gives a run a verdict only once it ran, ends it once, and restates only passed ↔ failed", async () => {
    const run = await insertRun(h.db, { plan });
    expect(await finishRun(h.db, run.id, { status: "passed" })).toBe(false);
    expect((await getRun(h.db, run.id))!.status).toBe("queued");
    expect(await markRunRunning(h.db, run.id)).toBe(true);
    expect(await markRunRunning(h.db, run.id)).toBe(false);
    expect(await finishRun(h.db, run.id, { status: "passed" })).toBe(true);
    expect(await finishRun(h.db, run.id, { status: "aborted", reason: "late" })).toBe(false);
    const summary = (await getRun(h.db, run.id))!.summary;
    expect(await restateRun(h.db, run.id, "passed", { status: "errored", reason: "no", summary: summary! })).toBe(false);
    expect(await restateRun(h.db, run.id, "passed", { status: "failed", reason: "latency.p95 over", summary: summary! })).toBe(true);
    expect((await getRun(h.db, run.id))!.status).toBe("failed");

    const queued = await insertRun(h.db, { plan });
    expect(await finishRun(h.db, queued.id, { status: "aborted", reason: "aborted by user" })).toBe(true);
  });
});
