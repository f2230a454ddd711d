import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIST_PAGE_MAX_BYTES, MAX_PLAN_BYTES, type PlanInput, type PlanRecord } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, insertRun, schema } from "@volley/db";
import type { RouteHandler } from "./api-handler";
import { call, readError, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";
import type { RunListItem } from "@/lib/types";

// GET /api/v1/runs and /api/v1/plans page by count and by size: `limit` has a maximum, `next` is a
// cursor to the following page, and a page of plans stops at LIST_PAGE_MAX_BYTES.

let env: ApiTestEnv;
let token = "";
let routes: { runs: RouteHandler; plans: RouteHandler; createPlan: RouteHandler };
const ORG_B = "org_paging_b";

const smallPlan: PlanInput = {
  name: "paging",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: 1, rate: 10 },
  scenario: { kind: "echo", message: { rate: 1 }, duration: "3s" },
};

/** A plan of about 420 KB, every field within its own cap: a 256 KiB body and 20 headers of 8 KiB. */
const bigPlan = (name: string): PlanInput => ({
  ...smallPlan,
  name,
  target: {
    url: "http://127.0.0.1:9005/echo",
    protocol: "http",
    headers: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`x-filler-${i}`, "h".repeat(8192)])),
    http: { body: "b".repeat(262_144) },
  },
});

beforeAll(async () => {
  env = await startApiTestEnv();
  await env.h.db.insert(schema.orgs).values({ id: ORG_B, name: "B", slug: "paging-b" });
  token = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "paging", scopes: ["read", "run"] })).secret;
  const runs = await import("@/app/api/v1/runs/route");
  const plans = await import("@/app/api/v1/plans/route");
  routes = { runs: runs.GET, plans: plans.GET, createPlan: plans.POST };
});
afterAll(async () => {
  await env?.close();
});

async function getJson<T>(route: RouteHandler, path: string): Promise<{ status: number; body: T; bytes: number }> {
  const res = await call(route, "GET", path, { token });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as T, bytes: Buffer.byteLength(text) };
}

describe("GET /api/v1/runs paging", () => {
  it("walks every run once, newest first, by following next; the last page's next is null", async () => {
    const planOf = (await import("@volley/contracts")).planSchema.parse(smallPlan);
    for (let i = 0; i < 7; i++) await insertRun(env.h.db, { plan: { ...planOf, name: `run-${i}` } });
    await insertRun(env.h.db, { plan: planOf, orgId: ORG_B }); // never on this org's pages

    const all = (await getJson<{ runs: RunListItem[]; next: string | null }>(routes.runs, "/api/v1/runs?limit=500")).body;
    expect(all.runs.map((r) => r.name)).toEqual(["run-6", "run-5", "run-4", "run-3", "run-2", "run-1", "run-0"]);
    expect(all.next).toBeNull();

    const walked: string[] = [];
    let path = "/api/v1/runs?limit=3";
    const sizes: number[] = [];
    for (let pages = 0; pages < 10; pages++) {
      const { status, body } = await getJson<{ runs: RunListItem[]; next: string | null }>(routes.runs, path);
      expect(status).toBe(200);
      sizes.push(body.runs.length);
      walked.push(...body.runs.map((r) => r.id));
      if (body.next === null) break;
      path = `/api/v1/runs?limit=3&cursor=${encodeURIComponent(body.next)}`;
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(walked).toEqual(all.runs.map((r) => r.id));
  });

  it("refuses a limit past 500, a cursor that names no run of the org, and cursor with offset, naming the field", async () => {
    const over = await call(routes.runs, "GET", "/api/v1/runs?limit=501", { token });
    expect(over.status).toBe(400);
    expect(await readError(over)).toMatchObject({ code: "invalid_query", issues: [{ path: "limit", message: "must be a whole number from 1 to 500" }] });

    const [foreign] = await env.h.db
      .select({ id: schema.runs.id })
      .from(schema.runs)
      .where((await import("drizzle-orm")).eq(schema.runs.orgId, ORG_B));
    for (const cursor of ["run_nope", foreign!.id]) {
      const res = await call(routes.runs, "GET", `/api/v1/runs?cursor=${cursor}`, { token });
      expect(res.status).toBe(400);
      const err = await readError(res);
      expect(err.code).toBe("invalid_query");
      expect(err.message).toContain(`cursor: "${cursor}" names no run of this list`);
    }
    const both = await call(routes.runs, "GET", "/api/v1/runs?cursor=x&offset=2", { token });
    expect(both.status).toBe(400);
    expect((await readError(both)).issues).toEqual([{ path: "offset", message: "send cursor (the previous page's next) or offset, not both" }]);
  });
});

describe("GET /api/v1/plans paging", () => {
  it("ends a page at LIST_PAGE_MAX_BYTES of plans, however high the limit, and next leads to the rest", async () => {
    const ids: string[] = [];
    for (const name of ["big-a", "big-b", "big-c"]) {
      const res = await call(routes.createPlan, "POST", "/api/v1/plans", { token }, { plan: bigPlan(name) });
      expect(res.status).toBe(201);
      ids.unshift(((await res.json()) as PlanRecord).id);
    }
    const one = Buffer.byteLength(JSON.stringify(bigPlan("big-a")));
    expect(one).toBeLessThan(MAX_PLAN_BYTES);
    expect(3 * one).toBeGreaterThan(LIST_PAGE_MAX_BYTES); // all three do not fit one page; two do

    const first = await getJson<{ plans: PlanRecord[]; next: string | null }>(routes.plans, "/api/v1/plans?limit=500");
    expect(first.status).toBe(200);
    expect(first.body.plans.map((p) => p.id)).toEqual(ids.slice(0, 2));
    expect(first.bytes).toBeLessThan(LIST_PAGE_MAX_BYTES + 10_000);
    expect(first.body.next).toBe(ids[1]);

    const second = await getJson<{ plans: PlanRecord[]; next: string | null }>(routes.plans, `/api/v1/plans?limit=500&cursor=${first.body.next}`);
    expect(second.body.plans.map((p) => p.id)).toEqual([ids[2]]);
    expect(second.body.plans[0]!.plan.target.http?.body).toHaveLength(262_144);
    expect(second.body.next).toBeNull();

    // By count as before: limit=1 pages one plan at a time; offset still works.
    const byCount = await getJson<{ plans: PlanRecord[]; next: string | null }>(routes.plans, "/api/v1/plans?limit=1&offset=1");
    expect(byCount.body.plans.map((p) => p.id)).toEqual([ids[1]]);
    expect(byCount.body.next).toBe(ids[1]);

    const gone = await call(routes.plans, "GET", "/api/v1/plans?cursor=pln_gone", { token });
    expect(gone.status).toBe(400);
    expect((await readError(gone)).message).toContain('cursor: "pln_gone" names no plan of this list');
  });
});
