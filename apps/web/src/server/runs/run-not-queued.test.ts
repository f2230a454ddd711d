import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runNotQueuedReason, type PlanInput } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, getRun } from "@volley/db";
import { freePort } from "@volley/devstack";
import { pino } from "pino";
import type { RouteHandler } from "../http/api-handler";
import { call, connectTestAgent, readError, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// Redis at REDIS_URL is not there at all (a port nothing listens on): the run row is written, its job
// cannot be queued. The run and the 503 say so plainly; the driver's text goes only to the log.

let env: ApiTestEnv;
let token = "";
let start: RouteHandler;
const logged: Array<Record<string, unknown>> = [];

const plan: PlanInput = {
  name: "not-queued",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: 1, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 32, rate: 1 }, duration: "5s" },
};

beforeAll(async () => {
  // Db 4 is redis-outage.test's, which leaves it at once for its own Redis; this suite never reaches it either.
  env = await startApiTestEnv();
  process.env.REDIS_URL = `redis://127.0.0.1:${await freePort()}`;
  // The web's logger (log.ts keeps it on globalThis), writing JSON lines here instead of stdout.
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) logged.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  (globalThis as { __volleyWebLog?: { logger?: unknown; said: Set<string> } }).__volleyWebLog = {
    logger: pino({ name: "web", level: "info" }, sink),
    said: new Set(),
  };
  token = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "not-queued", scopes: ["read", "run"] })).secret;
  await connectTestAgent(env.h.db, DEFAULT_ORG_ID);
  start = (await import("@/app/api/v1/runs/route")).POST;
});
afterAll(async () => {
  delete (globalThis as { __volleyWebLog?: unknown }).__volleyWebLog;
  await env?.close();
});

describe("a run whose job cannot be queued (Redis unreachable)", () => {
  it("is errored with a plain reason saying what to do, answered 503 with it, and the raw error is logged with its id", async () => {
    const res = await call(start, "POST", "/api/v1/runs", { token }, { plan });
    expect(res.status).toBe(503);
    const err = await readError(res);
    expect(err.code).toBe("unavailable");
    expect(err.message).toBe(`the run ${runNotQueuedReason()}`);

    const line = logged.find((l) => l.msg === "run could not be queued");
    expect(line).toBeDefined();
    const runId = line!.runId as string;
    const row = await getRun(env.h.db, runId);
    expect(row?.status).toBe("errored");
    expect(row?.reason).toBe(runNotQueuedReason());
    expect(row?.reason).toContain("REDIS_URL");

    // What went wrong in detail is in the log: the run's line says Redis was not connected, the client's
    // own lines the driver's text ("connect ECONNREFUSED 127.0.0.1:<port>"); none of it is what a user sees.
    expect((line!.err as { message: string }).message).toContain("Redis at REDIS_URL is not connected");
    expect(logged.some((l) => String(l.msg).includes("ECONNREFUSED"))).toBe(true);
    for (const shown of [err.message, row!.reason!]) {
      expect(shown).not.toMatch(/ECONNREFUSED|Connection is closed|127\.0\.0\.1|not connected/);
    }
  }, 30_000);
});
