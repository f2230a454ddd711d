import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlanRecord } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID } from "@volley/db";
import { stringify } from "yaml";
import type { RouteHandler } from "./api-handler";
import { malformedBody, type FuzzBody, type RouteShape } from "../test-support/api-fuzz-bodies";
import { BASE, call, connectTestAgent, ctx, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// 1,000 seeded malformed bodies against every route that takes a body: each must be answered
// 4xx with { error: { code, message } }, never 5xx. Reproduce a failure with its seed and index.

const SEED = 20261123;
const CASES = 1000;

let env: ApiTestEnv;
let token = "";
let cookie = "";
let planId = "";

const validPlan = () => ({
  name: "fuzz",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: 2, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 5 }, duration: "3s" },
  thresholds: ["latency.p95 < 200ms", { expression: "errors.rate < 1%", abortOnFail: true, delay: "1s" }],
  agents: { pool: "default", count: 1 },
});

interface FuzzRoute {
  name: string;
  route: () => Promise<RouteHandler>;
  method: string;
  path: () => string;
  params: () => Record<string, string>;
  creds: () => { token?: string; cookie?: string };
  shape: RouteShape;
}

const planBody: RouteShape = { valid: () => ({ plan: validPlan() }), required: ["plan"] };
const ROUTES: FuzzRoute[] = [
  {
    name: "POST /api/v1/runs",
    route: async () => (await import("@/app/api/v1/runs/route")).POST,
    method: "POST",
    path: () => "/api/v1/runs",
    params: () => ({}),
    creds: () => ({ token }),
    shape: planBody,
  },
  {
    name: "POST /api/v1/plans",
    route: async () => (await import("@/app/api/v1/plans/route")).POST,
    method: "POST",
    path: () => "/api/v1/plans",
    params: () => ({}),
    creds: () => ({ token }),
    shape: planBody,
  },
  {
    name: "POST /api/v1/plans (YAML)",
    route: async () => (await import("@/app/api/v1/plans/route")).POST,
    method: "POST",
    path: () => "/api/v1/plans",
    params: () => ({}),
    creds: () => ({ token }),
    shape: { valid: () => ({ yaml: stringify(validPlan()) }), required: ["yaml"] },
  },
  {
    name: "PUT /api/v1/plans/{id}",
    route: async () => (await import("@/app/api/v1/plans/[id]/route")).PUT,
    method: "PUT",
    path: () => `/api/v1/plans/${planId}`,
    params: () => ({ id: planId }),
    creds: () => ({ token }),
    shape: planBody,
  },
  {
    name: "POST /api/v1/plans/validate",
    route: async () => (await import("@/app/api/v1/plans/validate/route")).POST,
    method: "POST",
    path: () => "/api/v1/plans/validate",
    params: () => ({}),
    creds: () => ({ token }),
    shape: { valid: validPlan, required: ["name", "target", "connections", "scenario"] },
  },
  {
    name: "PUT /api/v1/plans/{id}/schedule",
    route: async () => (await import("@/app/api/v1/plans/[id]/schedule/route")).PUT,
    method: "PUT",
    path: () => `/api/v1/plans/${planId}/schedule`,
    params: () => ({ id: planId }),
    creds: () => ({ token }),
    shape: { valid: () => ({ cron: "0 3 * * *", timezone: "UTC", enabled: false }), required: ["cron"] },
  },
  {
    name: "POST /api/v1/tokens",
    route: async () => (await import("@/app/api/v1/tokens/route")).POST,
    method: "POST",
    path: () => "/api/v1/tokens",
    params: () => ({}),
    creds: () => ({ cookie }),
    shape: { valid: () => ({ name: "ci", scopes: ["read", "run"] }), required: ["name"] },
  },
];

beforeAll(async () => {
  env = await startApiTestEnv();
  // Thousands of requests from one credential: the limit is not what this test is about.
  process.env.VOLLEY_API_RATE_LIMIT = "1000000";
  token = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "fuzz", scopes: ["read", "run"] })).secret;
  await connectTestAgent(env.h.db, DEFAULT_ORG_ID); // runs are refused when their pool has no agent
  cookie = await signUp("fuzz@example.com", "Fuzz");
  const created = await call((await import("@/app/api/v1/plans/route")).POST, "POST", "/api/v1/plans", { token }, { plan: validPlan() });
  expect(created.status).toBe(201);
  planId = ((await created.json()) as PlanRecord).id;
});

afterAll(async () => {
  await env?.close();
});

function request(r: FuzzRoute, b: FuzzBody): Request {
  const { token: t, cookie: c } = r.creds();
  const headers: Record<string, string> = {};
  if (t) headers.authorization = `Bearer ${t}`;
  if (c) headers.cookie = c;
  if (b.contentType) headers["content-type"] = b.contentType;
  return new Request(`${BASE}${r.path()}`, { method: r.method, headers, body: b.body });
}

describe("hostile ids in the path", () => {
  it("are a 404, never a database error", async () => {
    const put = (await import("@/app/api/v1/plans/[id]/route")).PUT;
    for (const id of ["\u0000", "pln_\ud800", "\udfff", "x".repeat(100_000), "🚀", "' OR 1=1 --"]) {
      const res = await call(put, "PUT", "/api/v1/plans/x", { token }, { plan: validPlan() }, { id });
      expect(res.status).toBe(404);
      expect((await res.json()) as unknown).toMatchObject({ error: { code: "not_found", message: expect.stringMatching(/does not exist/) } });
    }
  });
});

describe("malformed bodies", () => {
  for (const r of ROUTES) {
    it(`${r.name}: ${CASES} of them, each a 4xx with { error: { code, message } }`, async () => {
      const handler = await r.route();
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      for (let i = 0; i < CASES; i++) {
        const b = malformedBody(SEED, i, r.shape);
        const res = await handler(request(r, b), ctx(r.params()));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const text = await res.text();
        let error: { code?: unknown; message?: unknown } | undefined;
        try {
          error = (JSON.parse(text) as { error?: typeof error }).error;
        } catch {
          error = undefined;
        }
        const ok =
          res.status >= 400 &&
          res.status < 500 &&
          typeof error?.code === "string" &&
          error.code !== "" &&
          typeof error.message === "string" &&
          error.message.trim() !== "";
        if (!ok) failures.push(`case ${i} (${b.kind}, content-type ${b.contentType}): ${res.status} ${text.slice(0, 300)}`);
      }
      expect(failures.slice(0, 10), `${failures.length} of ${CASES} cases failed (seed ${SEED})`).toEqual([]);
      // The same request with a valid body succeeds, so the 4xx above are the bodies' doing.
      const control = await handler(request(r, { kind: "valid", body: JSON.stringify(r.shape.valid()), contentType: "application/json" }), ctx(r.params()));
      expect(control.status, await control.clone().text()).toBeLessThan(300);
      // The generator reaches validation, not only the JSON parser or the rate limiter.
      expect(statuses.get(400)).toBeGreaterThan(CASES * 0.9);
      expect(statuses.has(429)).toBe(false);
    });
  }
});
