import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlanRecord, PlanVersion } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, schema } from "@volley/db";
import { eq } from "drizzle-orm";
import type { RouteHandler } from "../http/api-handler";
import { call, connectTestAgent, readError, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// Saved plans: /api/v1/plans, /api/v1/plans/{id}, /api/v1/plans/{id}/versions, with real tokens and a session.

let env: ApiTestEnv;
let routes: { create: RouteHandler; list: RouteHandler; get: RouteHandler; put: RouteHandler; del: RouteHandler; versions: RouteHandler };
const ORG_B = "org_plans_b";
const tok = { full: "", readOnly: "", orgB: "" };

const planInput = (name: string, count = 2) => ({
  name,
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 5 }, duration: "3s" },
});

beforeAll(async () => {
  env = await startApiTestEnv();
  await env.h.db.insert(schema.orgs).values({ id: ORG_B, name: "B", slug: "plans-b" });
  tok.full = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "full", scopes: ["read", "run"] })).secret;
  tok.readOnly = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "ro", scopes: ["read"] })).secret;
  tok.orgB = (await createApiToken(env.h.db, { orgId: ORG_B, name: "b", scopes: ["read", "run"] })).secret;
  // Runs are refused when their pool has no agent.
  await connectTestAgent(env.h.db, DEFAULT_ORG_ID);
  await connectTestAgent(env.h.db, ORG_B);
  const plans = await import("@/app/api/v1/plans/route");
  const one = await import("@/app/api/v1/plans/[id]/route");
  routes = {
    create: plans.POST,
    list: plans.GET,
    get: one.GET,
    put: one.PUT,
    del: one.DELETE,
    versions: (await import("@/app/api/v1/plans/[id]/versions/route")).GET,
  };
});

afterAll(async () => {
  await env?.close();
});

async function createPlan(token: string, name: string): Promise<PlanRecord> {
  const res = await call(routes.create, "POST", "/api/v1/plans", { token }, { plan: planInput(name) });
  expect(res.status).toBe(201);
  const record = (await res.json()) as PlanRecord;
  expect(res.headers.get("location")).toBe(`/api/v1/plans/${record.id}`);
  return record;
}

describe("plans", () => {
  it("saves a plan with defaults filled in, reads it back and lists it", async () => {
    const record = await createPlan(tok.full, "saved");
    expect(record).toMatchObject({ name: "saved", version: 1, plan: { agents: { pool: "default", count: 1 } } });
    const got = await call(routes.get, "GET", `/api/v1/plans/${record.id}`, { token: tok.readOnly }, undefined, { id: record.id });
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual(record);
    const list = (await (await call(routes.list, "GET", "/api/v1/plans?limit=10", { token: tok.readOnly })).json()) as { plans: PlanRecord[] };
    expect(list.plans.map((p) => p.id)).toContain(record.id);
    const bad = await call(routes.list, "GET", "/api/v1/plans?limit=0&color=red", { token: tok.full });
    expect(bad.status).toBe(400);
    expect((await readError(bad)).code).toBe("invalid_query");
  });

  it("saves every update as a new version and lists the versions oldest first", async () => {
    const record = await createPlan(tok.full, "v1");
    const res = await call(routes.put, "PUT", `/api/v1/plans/${record.id}`, { token: tok.full }, { plan: planInput("v2", 5) }, { id: record.id });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: record.id, name: "v2", version: 2, plan: { connections: { count: 5 } } });
    const versions = (await (
      await call(routes.versions, "GET", `/api/v1/plans/${record.id}/versions`, { token: tok.readOnly }, undefined, { id: record.id })
    ).json()) as {
      versions: PlanVersion[];
    };
    expect(versions.versions.map((v) => [v.version, v.name, v.plan.connections.count])).toEqual([
      [1, "v1", 2],
      [2, "v2", 5],
    ]);
  });

  it("names every bad field of a plan", async () => {
    const res = await call(routes.create, "POST", "/api/v1/plans", { token: tok.full }, { plan: { ...planInput("x"), connections: { count: 0 } } });
    expect(res.status).toBe(400);
    expect((await readError(res)).issues?.map((i) => i.path)).toContain("plan.connections.count");
  });

  it("deletes a plan; then every plan endpoint answers 404", async () => {
    const record = await createPlan(tok.full, "doomed");
    const p = { id: record.id };
    expect((await call(routes.del, "DELETE", `/api/v1/plans/${record.id}`, { token: tok.full }, undefined, p)).status).toBe(204);
    expect((await call(routes.get, "GET", `/api/v1/plans/${record.id}`, { token: tok.full }, undefined, p)).status).toBe(404);
    expect((await call(routes.versions, "GET", `/api/v1/plans/${record.id}/versions`, { token: tok.full }, undefined, p)).status).toBe(404);
    expect((await call(routes.del, "DELETE", `/api/v1/plans/${record.id}`, { token: tok.full }, undefined, p)).status).toBe(404);
  });

  it("lets a read-only token read plans but not save, change or delete them", async () => {
    const record = await createPlan(tok.full, "guarded");
    const p = { id: record.id };
    const attempts = [
      await call(routes.create, "POST", "/api/v1/plans", { token: tok.readOnly }, { plan: planInput("ro") }),
      await call(routes.put, "PUT", `/api/v1/plans/${record.id}`, { token: tok.readOnly }, { plan: planInput("ro") }, p),
      await call(routes.del, "DELETE", `/api/v1/plans/${record.id}`, { token: tok.readOnly }, undefined, p),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(403);
      expect((await readError(res)).message).toMatch(/lacks the "run" scope \(plans:write\)/);
    }
    expect(((await (await call(routes.get, "GET", `/api/v1/plans/${record.id}`, { token: tok.full }, undefined, p)).json()) as PlanRecord).version).toBe(1);
  });

  it("keeps plans to their org", async () => {
    const record = await createPlan(tok.full, "org A plan");
    const p = { id: record.id };
    for (const [route, method, path, body] of [
      [routes.get, "GET", `/api/v1/plans/${record.id}`, undefined],
      [routes.versions, "GET", `/api/v1/plans/${record.id}/versions`, undefined],
      [routes.put, "PUT", `/api/v1/plans/${record.id}`, { plan: planInput("hijack") }],
      [routes.del, "DELETE", `/api/v1/plans/${record.id}`, undefined],
    ] as const) {
      expect((await call(route, method, path, { token: tok.orgB }, body, p)).status, `${method} ${path}`).toBe(404);
    }
    const listB = (await (await call(routes.list, "GET", "/api/v1/plans", { token: tok.orgB })).json()) as { plans: PlanRecord[] };
    expect(listB.plans).toEqual([]);
    const [row] = await env.h.db.select().from(schema.plans).where(eq(schema.plans.id, record.id));
    expect(row?.version).toBe(1);
  });

  it("runs a saved plan by id (its latest version), listed under the plan; another org's plan id is 404", async () => {
    const runs = await import("@/app/api/v1/runs/route");
    const record = await createPlan(tok.full, "run me");
    const updated = await call(routes.put, "PUT", `/api/v1/plans/${record.id}`, { token: tok.full }, { plan: planInput("run me v2", 3) }, { id: record.id });
    expect(updated.status).toBe(200);
    const res = await call(runs.POST, "POST", "/api/v1/runs", { token: tok.full }, { planId: record.id });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const [row] = await env.h.db.select().from(schema.runs).where(eq(schema.runs.id, id));
    expect(row).toMatchObject({ planId: record.id, name: "run me v2", planVersion: 2 });
    expect(row?.plan.connections.count).toBe(3);
    // The API says which version it ran; an inline plan's run has none.
    const one = await import("@/app/api/v1/runs/[id]/route");
    const shown = (await (await call(one.GET, "GET", `/api/v1/runs/${id}`, { token: tok.full }, undefined, { id })).json()) as { planVersion: number | null };
    expect(shown.planVersion).toBe(2);
    const inline = await call(runs.POST, "POST", "/api/v1/runs", { token: tok.full }, { plan: planInput("inline") });
    const inlineId = ((await inline.json()) as { id: string }).id;
    const [inlineRow] = await env.h.db.select().from(schema.runs).where(eq(schema.runs.id, inlineId));
    expect(inlineRow?.planVersion).toBeNull();
    expect((await call(runs.POST, "POST", "/api/v1/runs", { token: tok.orgB }, { planId: record.id })).status).toBe(404);
    const both = await call(runs.POST, "POST", "/api/v1/runs", { token: tok.full }, { planId: record.id, plan: planInput("x") });
    expect(both.status).toBe(400);
    expect((await readError(both)).message).toContain("exactly one");
  });

  it("lets a signed-in member save plans and a viewer only read them", async () => {
    const cookie = await signUp("planner@example.com", "Planner");
    const created = await call(routes.create, "POST", "/api/v1/plans", { cookie }, { plan: planInput("from the UI") });
    expect(created.status).toBe(201);
    const [user] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, "planner@example.com"));
    await env.h.db.update(schema.members).set({ role: "viewer" }).where(eq(schema.members.userId, user!.id));
    const denied = await call(routes.create, "POST", "/api/v1/plans", { cookie }, { plan: planInput("viewer") });
    expect(denied.status).toBe(403);
    expect((await readError(denied)).message).toMatch(/\(viewer\) cannot do this \(plans:write\); it needs member/);
    expect((await call(routes.list, "GET", "/api/v1/plans", { cookie })).status).toBe(200);
  });
});

describe("plan limits through the API", () => {
  it("refuses, 400 naming the field and the limit, a duration past 7 days, an overlong URL and a plan past MAX_PLAN_BYTES; stores none of them", async () => {
    const before = (await env.h.db.select({ id: schema.plans.id }).from(schema.plans)).length;
    const cases: Array<[unknown, string, RegExp]> = [
      [{ ...planInput("forever"), scenario: { kind: "echo", message: { rate: 1 }, duration: "99999999999h" } }, "scenario.duration", /must be at most 7 days/],
      [{ ...planInput("long-url"), target: { url: `ws://127.0.0.1:9001/${"a".repeat(2100)}` } }, "target.url", /at most 2048 characters/],
      [
        {
          ...planInput("huge"),
          target: {
            url: "http://127.0.0.1:9005/echo",
            protocol: "http",
            headers: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, "v".repeat(8192)])),
            http: { body: "b".repeat(262_144) },
          },
        },
        "",
        /a plan may be at most 524288 bytes/,
      ],
    ];
    for (const [plan, path, message] of cases) {
      const res = await call(routes.create, "POST", "/api/v1/plans", { token: tok.full }, { plan });
      expect(res.status).toBe(400);
      const err = await readError(res);
      expect(err.code).toBe("invalid_body");
      const issue = err.issues?.find((i) => i.path === (path ? `plan.${path}` : "plan"));
      expect(issue?.message).toMatch(message);
    }
    expect((await env.h.db.select({ id: schema.plans.id }).from(schema.plans)).length).toBe(before);
  });
});
