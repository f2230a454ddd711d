import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MESSAGES_PER_CORE_PER_SECOND, type PlanInput } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, getRun, upsertAgent } from "@volley/db";
import type { RouteHandler } from "../http/api-handler";
import { call, readError, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// Preflight (contracts agent-load.ts) through POST /api/v1/runs and POST /api/v1/plans/validate, against
// agent rows written the way hubs write them (upsertAgent on connect).

let env: ApiTestEnv;
let token = "";
let routes: { runs: RouteHandler; validate: RouteHandler };

const agentHello = (name: string, pool: string, cores: number) => ({
  token: "unused",
  instanceId: `${name}-instance`,
  name,
  version: "0.1.0",
  pool,
  labels: {},
  capacity: { cores, memoryMb: 4096, maxConnections: 50_000, sourceAddresses: [] },
});

const plan = (over: { pool: string; count?: number | "all"; connections?: number; rate?: number }): PlanInput => ({
  name: "preflight",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: over.connections ?? 10, rate: 100 },
  scenario: { kind: "echo", message: { bytes: 32, rate: over.rate ?? 1 }, duration: "5s" },
  agents: { pool: over.pool, count: over.count ?? 1 },
});

beforeAll(async () => {
  env = await startApiTestEnv();
  token = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "preflight", scopes: ["read", "run"] })).secret;
  routes = { runs: (await import("@/app/api/v1/runs/route")).POST, validate: (await import("@/app/api/v1/plans/validate/route")).POST };
  await upsertAgent(env.h.db, agentHello("solo", "one", 2));
  await upsertAgent(env.h.db, agentHello("pair-a", "two", 2));
  await upsertAgent(env.h.db, agentHello("pair-b", "two", 2));
});
afterAll(async () => {
  await env?.close();
});

describe("POST /api/v1/runs preflight", () => {
  it("refuses at once, 409 naming the numbers, a plan asking for more agents than its pool has connected; queues nothing", async () => {
    const res = await call(routes.runs, "POST", "/api/v1/runs", { token }, { plan: plan({ pool: "one", count: 4 }) });
    expect(res.status).toBe(409);
    const err = await readError(res);
    expect(err.code).toBe("not_enough_agents");
    expect(err.message).toBe("plan asks for 4 agents; pool 'one' has 1 connected; start 3 more agents in pool 'one', or lower agents.count to 1");

    const empty = await readError(await call(routes.runs, "POST", "/api/v1/runs", { token }, { plan: plan({ pool: "nobody-here", count: "all" }) }));
    expect(empty.message).toBe(
      "plan asks for every agent of its pool (agents.count: all); pool 'nobody-here' has 0 connected; start an agent in pool 'nobody-here' (see the Agents page)",
    );
  });

  it("queues a plan its agents can serve, with no warnings", async () => {
    const res = await call(routes.runs, "POST", "/api/v1/runs", { token }, { plan: plan({ pool: "two", count: 2 }) });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { id: string; warnings: unknown[] };
    expect(body.warnings).toEqual([]);
    expect((await getRun(env.h.db, body.id))?.status).toBe("queued");
  });

  it("queues, with an agents_saturated warning naming the rates and cores, a plan whose message rate exceeds what its agents' cores handle", async () => {
    // 2 cores: 2 × MESSAGES_PER_CORE_PER_SECOND messages/s (sent + received). 1,000 connections × 60/s = 60,000 sent + 60,000 received.
    expect(2 * MESSAGES_PER_CORE_PER_SECOND).toBeLessThan(120_000);
    const res = await call(routes.runs, "POST", "/api/v1/runs", { token }, { plan: plan({ pool: "one", connections: 1000, rate: 60 }) });
    expect(res.status).toBe(201);
    const { warnings } = (await res.json()) as { warnings: Array<{ code: string; message: string }> };
    expect(warnings.map((w) => w.code)).toEqual(["agents_saturated"]);
    expect(warnings[0]!.message).toContain("sends 60,000 and receives 60,000 messages/s");
    expect(warnings[0]!.message).toContain(
      `the 1 agent it gets from pool 'one' (2 cores) handle about ${(2 * MESSAGES_PER_CORE_PER_SECOND).toLocaleString("en-US")}/s`,
    );
    // Two agents' cores take the same load without a warning.
    const split = (await (
      await call(routes.runs, "POST", "/api/v1/runs", { token }, { plan: plan({ pool: "two", count: 2, connections: 1000, rate: 40 }) })
    ).json()) as { warnings: unknown[] };
    expect(split.warnings).toEqual([]);
  });
});

describe("POST /api/v1/plans/validate preflight", () => {
  it("returns the same findings as warnings (the plan itself is valid)", async () => {
    const res = await call(routes.validate, "POST", "/api/v1/plans/validate", { token }, plan({ pool: "one", count: 4 }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { ok: boolean; warnings: Array<{ code: string; message: string }> };
    expect(body.ok).toBe(true);
    expect(body.warnings).toEqual([{ code: "not_enough_agents", message: expect.stringMatching(/^plan asks for 4 agents; pool 'one' has 1 connected/) }]);
    const fine = (await (await call(routes.validate, "POST", "/api/v1/plans/validate", { token }, plan({ pool: "two", count: 2 }))).json()) as {
      warnings: unknown[];
    };
    expect(fine.warnings).toEqual([]);
  });
});
