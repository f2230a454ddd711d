import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePlanDocument, TEMPLATES, type PlanRecord, type PlanVersion } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, insertPlan } from "@volley/db";
import { parse } from "yaml";
import type { AuthContext } from "../auth/auth";
import type { RouteHandler } from "../http/api-handler";
import { planEditorText } from "../../lib/plan-text";
import { setPlanField } from "../../lib/set-plan-field";
import { call, readError, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";
import { createPlan, loadPlan, loadPlanVersions, savePlanVersion } from "./plans";

// A plan saved as YAML keeps its author's text (comments, key order, no defaults) beside the plan that runs.

let env: ApiTestEnv;
let token = "";
let routes: { create: RouteHandler; list: RouteHandler; get: RouteHandler; put: RouteHandler; versions: RouteHandler };
const auth: AuthContext = { orgId: DEFAULT_ORG_ID, actor: { kind: "token", tokenId: "tok_yaml", scopes: ["read", "run"] } };

const capacity = TEMPLATES.find((t) => t.id === "capacity-search")!.yaml;
const commentLines = (text: string) => text.split("\n").filter((l) => l.includes("#"));

beforeAll(async () => {
  env = await startApiTestEnv();
  token = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "yaml", scopes: ["read", "run"] })).secret;
  const plans = await import("@/app/api/v1/plans/route");
  const one = await import("@/app/api/v1/plans/[id]/route");
  routes = { create: plans.POST, list: plans.GET, get: one.GET, put: one.PUT, versions: (await import("@/app/api/v1/plans/[id]/versions/route")).GET };
});

afterAll(async () => {
  await env?.close();
});

describe("a plan saved as YAML", () => {
  it("keeps the Capacity search template as written through the API: comments, line count and key order; the plan that runs has the defaults", async () => {
    expect(commentLines(capacity).length).toBeGreaterThanOrEqual(4);
    const res = await call(routes.create, "POST", "/api/v1/plans", { token }, { yaml: capacity });
    expect(res.status).toBe(201);
    const created = (await res.json()) as PlanRecord;
    expect(created.yaml).toBe(capacity);
    // Defaults are filled into the plan, not into the text.
    expect(created.plan.agents).toEqual({ pool: "default", count: 1 });
    expect(created.plan.scenario.warmup).toBeDefined();
    expect(capacity).not.toContain("warmup");

    const got = (await (await call(routes.get, "GET", `/api/v1/plans/${created.id}`, { token }, undefined, { id: created.id })).json()) as PlanRecord;
    expect(got.yaml).toBe(capacity);
    expect(commentLines(got.yaml!)).toEqual(commentLines(capacity));
    expect(got.yaml!.split("\n").length).toBe(capacity.split("\n").length);
    expect(Object.keys(parse(got.yaml!) as object)).toEqual(Object.keys(parse(capacity) as object));
    const list = (await (await call(routes.list, "GET", "/api/v1/plans", { token })).json()) as { plans: PlanRecord[] };
    expect(list.plans.find((p) => p.id === created.id)?.yaml).toBe(capacity);
  });

  it("keeps each version's own text: a form edit changes one line and every comment stays", async () => {
    const created = (await (await call(routes.create, "POST", "/api/v1/plans", { token }, { yaml: capacity })).json()) as PlanRecord;
    const edited = setPlanField(capacity, ["connections", "count"], 250)!;
    const changed = edited.split("\n").filter((line, i) => line !== capacity.split("\n")[i]);
    expect(changed).toEqual(["connections: { count: 250, rate: 100 }"]);
    const p = { id: created.id };
    const res = await call(routes.put, "PUT", `/api/v1/plans/${created.id}`, { token }, { yaml: edited }, p);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ version: 2, yaml: edited, plan: { connections: { count: 250 } } });
    const { versions } = (await (await call(routes.versions, "GET", `/api/v1/plans/${created.id}/versions`, { token }, undefined, p)).json()) as {
      versions: PlanVersion[];
    };
    expect(versions.map((v) => v.yaml)).toEqual([capacity, edited]);
    expect(commentLines(versions[1]!.yaml!)).toEqual(commentLines(capacity));
  });

  it("keeps the text through the web's server layer (the editor's Save), and the editor opens it as written", async () => {
    const created = await createPlan(auth, { yaml: capacity });
    expect(planEditorText(await loadPlan(DEFAULT_ORG_ID, created.id))).toBe(capacity);
    const edited = setPlanField(capacity, ["scenario", "duration"], "5m")!;
    await savePlanVersion(auth, created.id, { yaml: edited });
    const latest = await loadPlan(DEFAULT_ORG_ID, created.id);
    expect(planEditorText(latest)).toBe(edited);
    expect(latest.plan.scenario.duration).toBe("5m");
    const versions = await loadPlanVersions(DEFAULT_ORG_ID, created.id);
    expect(versions.map(planEditorText)).toEqual([capacity, edited]);
  });

  it("keeps every template's comments when it is saved as a plan", async () => {
    for (const t of TEMPLATES) {
      const saved = await createPlan(auth, { yaml: t.yaml });
      expect(planEditorText(await loadPlan(DEFAULT_ORG_ID, saved.id)), t.id).toBe(t.yaml);
    }
  });

  it("opens a plan saved as JSON, or before plans kept their text, as its stored plan in YAML", async () => {
    const plan = parsePlanDocument(capacity);
    if (!plan.ok) throw new Error("the template must parse");
    const old = await insertPlan(env.h.db, { orgId: DEFAULT_ORG_ID, document: plan.plan });
    const got = (await (await call(routes.get, "GET", `/api/v1/plans/${old.id}`, { token }, undefined, { id: old.id })).json()) as PlanRecord;
    expect(got.yaml).toBeNull();
    expect(parse(planEditorText(got))).toEqual(plan.plan);
    const asJson = (await (await call(routes.create, "POST", "/api/v1/plans", { token }, { plan: parse(capacity) })).json()) as PlanRecord;
    expect(asJson.yaml).toBeNull();
    expect((await loadPlanVersions(DEFAULT_ORG_ID, old.id)).map((v) => v.yaml)).toEqual([null]);
  });

  it("names the field inside the YAML that is wrong, and refuses a body with both plan and yaml or neither", async () => {
    const bad = await call(routes.create, "POST", "/api/v1/plans", { token }, { yaml: capacity.replace("count: 100", "count: 0") });
    expect(bad.status).toBe(400);
    expect((await readError(bad)).issues?.map((i) => i.path)).toContain("yaml.connections.count");
    const broken = await call(routes.create, "POST", "/api/v1/plans", { token }, { yaml: "name: [unclosed" });
    expect((await readError(broken)).issues?.[0]).toMatchObject({ path: "yaml", message: expect.stringMatching(/not valid YAML/) });
    for (const body of [{ yaml: capacity, plan: parse(capacity) }, {}]) {
      const res = await call(routes.create, "POST", "/api/v1/plans", { token }, body);
      expect(res.status).toBe(400);
      expect((await readError(res)).message).toContain('exactly one of "plan"');
    }
  });
});
