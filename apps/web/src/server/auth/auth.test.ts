import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, getRun, insertRun, newId, revokeApiToken, schema } from "@volley/db";
import { eq } from "drizzle-orm";
import type { RouteHandler } from "../http/api-handler";
import { networkInterfaces } from "node:os";
import { BASE, call, connectTestAgent, readError, signUp, startApiTestEnv, TEST_PASSWORD, type ApiTestEnv } from "../test-support/api-test-env";

// Authentication (API tokens, sessions), token scopes and roles, and org isolation, through the real routes.

let env: ApiTestEnv;
let routes: {
  createRun: RouteHandler;
  listRuns: RouteHandler;
  getRun: RouteHandler;
  intervals: RouteHandler;
  analysis: RouteHandler;
  abort: RouteHandler;
  openapi: RouteHandler;
};
const ORG_B = "org_b_test";
const tokens = { full: "", readOnly: "", revoked: "", orgB: "" };

const plan: Plan = {
  name: "auth test",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws", connectTimeout: "10s" },
  connections: { count: 1, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 5, per: "connection", arrival: "constant", timeout: "10s" }, duration: "3s", warmup: "1s" },
  thresholds: [],
  agents: { pool: "default", count: 1 },
};

beforeAll(async () => {
  env = await startApiTestEnv();
  const db = env.h.db;
  await db.insert(schema.orgs).values({ id: ORG_B, name: "Org B", slug: "org-b" });
  const make = async (orgId: string, scopes: ("read" | "run")[]) => createApiToken(db, { orgId, name: `t-${scopes.join("-")}`, scopes });
  tokens.full = (await make(DEFAULT_ORG_ID, ["read", "run"])).secret;
  tokens.readOnly = (await make(DEFAULT_ORG_ID, ["read"])).secret;
  const revoked = await make(DEFAULT_ORG_ID, ["read", "run"]);
  await revokeApiToken(db, DEFAULT_ORG_ID, revoked.token.id);
  tokens.revoked = revoked.secret;
  tokens.orgB = (await make(ORG_B, ["read", "run"])).secret;
  // Runs are refused when their pool has no agent.
  await connectTestAgent(db, DEFAULT_ORG_ID);
  await connectTestAgent(db, ORG_B);
  const runs = await import("@/app/api/v1/runs/route");
  routes = {
    createRun: runs.POST,
    listRuns: runs.GET,
    getRun: (await import("@/app/api/v1/runs/[id]/route")).GET,
    intervals: (await import("@/app/api/v1/runs/[id]/intervals/route")).GET,
    analysis: (await import("@/app/api/v1/runs/[id]/analysis/route")).GET,
    abort: (await import("@/app/api/v1/runs/[id]/abort/route")).POST,
    openapi: (await import("@/app/api/v1/openapi.json/route")).GET,
  };
});

afterAll(async () => {
  await env?.close();
});

describe("authentication", () => {
  it("answers a request without credentials with 401 unauthenticated in the one error shape", async () => {
    const res = await call(routes.listRuns, "GET", "/api/v1/runs");
    expect(res.status).toBe(401);
    const err = await readError(res);
    expect(err.code).toBe("unauthenticated");
    expect(err.message).toMatch(/needs credentials — send "Authorization: Bearer <token>"/);
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("answers an unknown token, a malformed header and a revoked token with 401", async () => {
    const unknown = await call(routes.listRuns, "GET", "/api/v1/runs", { token: "vly_not-a-real-token" });
    expect(unknown.status).toBe(401);
    expect((await readError(unknown)).message).toMatch(/unknown or revoked/);
    const malformed = await call(routes.listRuns, "GET", "/api/v1/runs", { authorization: "Token abc" });
    expect(malformed.status).toBe(401);
    expect((await readError(malformed)).message).toMatch(/not "Bearer <token>"/);
    const revoked = await call(routes.listRuns, "GET", "/api/v1/runs", { token: tokens.revoked });
    expect(revoked.status).toBe(401);
    expect((await readError(revoked)).code).toBe("unauthenticated");
  });

  it("accepts a live token and records when it was last used", async () => {
    const res = await call(routes.listRuns, "GET", "/api/v1/runs", { token: tokens.readOnly });
    expect(res.status).toBe(200);
    const rows = await env.h.db.select().from(schema.apiTokens).where(eq(schema.apiTokens.orgId, DEFAULT_ORG_ID));
    const used = rows.find((r) => tokens.readOnly.startsWith(r.prefix) && r.scopes.length === 1);
    expect(used?.lastUsedAt).toBeInstanceOf(Date);
  });

  it("serves the OpenAPI document without credentials", async () => {
    expect((await call(routes.openapi, "GET", "/api/v1/openapi.json")).status).toBe(200);
  });
});

describe("token scopes", () => {
  it("lets a read-only token read but not start or stop runs (403 naming the scope)", async () => {
    const res = await call(routes.createRun, "POST", "/api/v1/runs", { token: tokens.readOnly }, { plan });
    expect(res.status).toBe(403);
    const err = await readError(res);
    expect(err.code).toBe("forbidden");
    expect(err.message).toMatch(/lacks the "run" scope \(runs:write\)/);
    const row = await insertRun(env.h.db, { plan });
    const abort = await call(routes.abort, "POST", `/api/v1/runs/${row.id}/abort`, { token: tokens.readOnly }, undefined, { id: row.id });
    expect(abort.status).toBe(403);
    expect((await getRun(env.h.db, row.id))?.status).toBe("queued");
    expect((await call(routes.getRun, "GET", `/api/v1/runs/${row.id}`, { token: tokens.readOnly }, undefined, { id: row.id })).status).toBe(200);
  });
});

describe("org isolation", () => {
  it("gives a token of org B 404 for org A's run on every run endpoint, and leaves it out of B's list", async () => {
    const a = await insertRun(env.h.db, { plan: { ...plan, name: "org A run" }, orgId: DEFAULT_ORG_ID });
    const b = await insertRun(env.h.db, { plan: { ...plan, name: "org B run" }, orgId: ORG_B });
    const p = { id: a.id };
    for (const [route, method, path] of [
      [routes.getRun, "GET", `/api/v1/runs/${a.id}`],
      [routes.intervals, "GET", `/api/v1/runs/${a.id}/intervals`],
      [routes.analysis, "GET", `/api/v1/runs/${a.id}/analysis`],
      [routes.abort, "POST", `/api/v1/runs/${a.id}/abort`],
    ] as const) {
      const res = await call(route, method, path, { token: tokens.orgB }, undefined, p);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((await readError(res)).code).toBe("not_found");
      // The owner still sees it: the 404 is isolation, not a missing run.
      if (method === "GET") expect((await call(route, method, path, { token: tokens.full }, undefined, p)).status).toBe(200);
    }
    expect((await getRun(env.h.db, a.id))?.status).toBe("queued"); // B's abort did nothing

    const listB = (await (await call(routes.listRuns, "GET", "/api/v1/runs", { token: tokens.orgB })).json()) as { runs: { id: string }[] };
    expect(listB.runs.map((r) => r.id)).toEqual([b.id]);
    const listA = (await (await call(routes.listRuns, "GET", "/api/v1/runs", { token: tokens.full })).json()) as { runs: { id: string }[] };
    expect(listA.runs.map((r) => r.id)).toContain(a.id);
    expect(listA.runs.map((r) => r.id)).not.toContain(b.id);
  });

  it("queues a run created with org B's token in org B", async () => {
    const res = await call(routes.createRun, "POST", "/api/v1/runs", { token: tokens.orgB }, { plan });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect(await getRun(env.h.db, id, ORG_B)).not.toBeNull();
    expect(await getRun(env.h.db, id, DEFAULT_ORG_ID)).toBeNull();
  });
});

describe("sessions", () => {
  it("makes the first account owner of the default org and later ones owners of their own org", async () => {
    const first = await signUp(`first-${newId("usr")}@example.com`);
    const own = await insertRun(env.h.db, { plan: { ...plan, name: "default org run" } });
    const mine = (await (await call(routes.listRuns, "GET", "/api/v1/runs", { cookie: first })).json()) as { runs: { id: string }[] };
    expect(mine.runs.map((r) => r.id)).toContain(own.id);

    const second = await signUp(`second-${newId("usr")}@example.com`, "Second");
    const theirs = await call(routes.listRuns, "GET", "/api/v1/runs", { cookie: second });
    expect(theirs.status).toBe(200);
    expect(((await theirs.json()) as { runs: unknown[] }).runs).toEqual([]);
    expect((await call(routes.getRun, "GET", `/api/v1/runs/${own.id}`, { cookie: second }, undefined, { id: own.id })).status).toBe(404);
  });

  it("rate limits sign-in attempts per client address with 429 and Retry-After", async () => {
    const { POST } = await import("@/app/api/auth/[...all]/route");
    const attempt = () =>
      POST(
        new Request(`${BASE}/api/auth/sign-in/email`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: BASE, "x-volley-peer": "203.0.113.7" },
          body: JSON.stringify({ email: "nobody@example.com", password: "wrong password" }),
        }),
      );
    process.env.VOLLEY_SIGNIN_RATE_LIMIT = "2";
    try {
      expect((await attempt()).status).toBe(401); // better-auth: wrong email or password
      expect((await attempt()).status).toBe(401);
      const limited = await attempt();
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await readError(limited)).code).toBe("rate_limited");
    } finally {
      delete process.env.VOLLEY_SIGNIN_RATE_LIMIT;
    }
  });

  it("treats a forged session cookie as no session", async () => {
    const res = await call(routes.listRuns, "GET", "/api/v1/runs", { cookie: "better-auth.session_token=forged.value" });
    expect(res.status).toBe(401);
  });
});

describe("sign-in origins (CSRF protection) on a default start", () => {
  // What Next hands the auth routes when web binds every interface (WEB_HOST unset): the request
  // URL's origin is http://0.0.0.0:3000, which no browser ever sends as its Origin.
  const bound = "http://0.0.0.0:3000";
  const signInFrom = async (origin: string) => {
    const { POST } = await import("@/app/api/auth/[...all]/route");
    return POST(
      new Request(`${bound}/api/auth/sign-in/email`, {
        method: "POST",
        // A cookie (any) makes better-auth check the Origin, as a returning browser's would.
        headers: { "content-type": "application/json", origin, cookie: "theme=dark", "x-volley-peer": `198.51.100.${origin.length}` },
        body: JSON.stringify({ email: "origins@example.com", password: TEST_PASSWORD }),
      }),
    );
  };

  beforeAll(async () => {
    await signUp("origins@example.com");
  });

  it("accepts localhost, 127.0.0.1 and this machine's own addresses at the web port", async () => {
    const own = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    for (const origin of ["http://localhost:3000", "http://127.0.0.1:3000", ...(own ? [`http://${own}:3000`] : [])]) {
      expect((await signInFrom(origin)).status, origin).toBe(200);
    }
  });

  it("refuses a foreign origin, and a local address at another port", async () => {
    for (const origin of ["http://evil.example", "http://localhost:3999"]) expect((await signInFrom(origin)).status, origin).toBe(403);
  });

  it("accepts VOLLEY_PUBLIC_URL when it is set", async () => {
    expect((await signInFrom("https://volley.example.com")).status).toBe(403);
    process.env.VOLLEY_PUBLIC_URL = "https://volley.example.com/";
    try {
      expect((await signInFrom("https://volley.example.com")).status).toBe(200);
      expect((await signInFrom("http://localhost:3000")).status).toBe(200);
    } finally {
      delete process.env.VOLLEY_PUBLIC_URL;
    }
  });
});
