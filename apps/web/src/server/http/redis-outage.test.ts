import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runNotQueuedReason, type PlanInput } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, getRun } from "@volley/db";
import { freePort, startLocalRedis, type RunningRedis } from "@volley/devstack";
import { Redis } from "ioredis";
import type { RouteHandler } from "./api-handler";
import { call, connectTestAgent, readError, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";
import { REDIS_COMMAND_TIMEOUT_MS } from "./errors";

// A frozen Redis (connected, answering nothing) against a real redis-server of this test's own:
// CLIENT PAUSE freezes every client of that server, so it must not be the shared test Redis.

let env: ApiTestEnv;
let redis: RunningRedis;
let dir: string;
let token = "";
let routes: { list: RouteHandler; start: RouteHandler };

const plan: PlanInput = {
  name: "redis-outage",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: 1, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 32, rate: 1 }, duration: "5s" },
};

beforeAll(async () => {
  env = await startApiTestEnv();
  dir = mkdtempSync(join(tmpdir(), "volley-redis-outage-"));
  redis = await startLocalRedis({ dir, port: await freePort(), persist: false });
  process.env.REDIS_URL = redis.url;
  token = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "redis-outage", scopes: ["read", "run"] })).secret;
  await connectTestAgent(env.h.db, DEFAULT_ORG_ID);
  const runs = await import("@/app/api/v1/runs/route");
  routes = { list: runs.GET, start: runs.POST };
});
afterAll(async () => {
  await env?.close();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Freezes the throwaway Redis for `ms`: it keeps every connection and answers nothing. */
async function freeze(ms: number): Promise<void> {
  const admin = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  await admin.call("CLIENT", "PAUSE", String(ms), "ALL");
  admin.disconnect();
}

async function timed(op: () => Promise<Response>): Promise<{ res: Response; ms: number }> {
  const t0 = performance.now();
  const res = await op();
  return { res, ms: performance.now() - t0 };
}

describe("web with a frozen Redis", () => {
  it("answers within a bound (reads served, runs refused with 503 unavailable saying what to do), then recovers by itself", async () => {
    // Healthy first: the client and rate limiter are connected to this Redis.
    expect((await call(routes.start, "POST", "/api/v1/runs", { token }, { plan })).status).toBe(201);

    const pause = 15_000;
    await freeze(pause);
    const frozenAt = performance.now();

    // Listing needs Redis only for the rate limiter, which falls back to its in-memory twin.
    const list = await timed(() => call(routes.list, "GET", "/api/v1/runs", { token }));
    expect(list.res.status).toBe(200);
    expect(list.ms).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS + 1_500);

    // Queueing needs Redis: 503 after the rate limiter's and the queue's deadline, never the whole pause,
    // saying what to do (the wait itself is in the log).
    const start = await timed(() => call(routes.start, "POST", "/api/v1/runs", { token }, { plan }));
    expect(start.res.status).toBe(503);
    const err = await readError(start.res);
    expect(err.code).toBe("unavailable");
    expect(err.message).toBe(`the run ${runNotQueuedReason()}`);
    expect(start.ms).toBeLessThan(3 * REDIS_COMMAND_TIMEOUT_MS + 1_500);
    expect(performance.now() - frozenAt).toBeLessThan(pause - 2_000); // the answers came before Redis did

    // The run it could not queue is not left `queued` forever.
    const { runs } = (await (await call(routes.list, "GET", "/api/v1/runs", { token })).json()) as { runs: Array<{ id: string; status: string }> };
    expect(runs[0]!.status).toBe("errored");
    expect((await getRun(env.h.db, runs[0]!.id))?.reason).toBe(runNotQueuedReason());

    // Redis answers again: the same web process queues runs without a restart.
    await new Promise((r) => setTimeout(r, Math.max(0, pause - (performance.now() - frozenAt)) + 200));
    const after = await timed(() => call(routes.start, "POST", "/api/v1/runs", { token }, { plan }));
    expect(after.res.status).toBe(201);
    expect(after.ms).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS);
  }, 60_000);
});
