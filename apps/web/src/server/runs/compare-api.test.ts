import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planSchema, type PlanTrend, type RunSummary, type RunWithMeta } from "@volley/contracts";
import {
  createApiToken,
  createWebhook,
  DEFAULT_ORG_ID,
  disableWebhook,
  finishRun,
  insertPlan,
  insertRun,
  markRunRunning,
  newId,
  recordWebhookDelivery,
  schema,
} from "@volley/db";
import { eq } from "drizzle-orm";
import { Queue } from "bullmq";
import { nextPlanFiring, QUEUE_NAMES } from "@volley/queue";
import type { RouteHandler } from "../http/api-handler";
import type { RunListItem } from "@/lib/types";
import { getAuth } from "../auth/better-auth";
import { loadSharedRun } from "../shares/run-shares";
import { call, readError, request, ctx, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// Tags and notes, baselines, the plan trend's regression flags, run-list filters and paging, and
// share links, through the route handlers with real PostgreSQL, Redis and better-auth sessions.

let env: ApiTestEnv;
let r: Record<string, RouteHandler>;
let share: (req: Request, c: { params: Promise<{ id: string }> }) => Promise<Response>;
const ORG_B = "org_compare_b";
const tok = { full: "", readOnly: "", orgB: "" };
let owner = ""; // first account: owner of the default org
let viewer = ""; // owns an org of its own, and is a viewer of the default org
let outsider = ""; // owns an org of its own only
const userId = { viewer: "", outsider: "" };

const doc = (name: string) =>
  planSchema.parse({
    name,
    target: { url: "ws://127.0.0.1:9001/echo" },
    connections: { count: 2, rate: 10 },
    scenario: { kind: "echo", message: { bytes: 64, rate: 5 }, duration: "3s" },
  });

const lat = (p95: number) => ({ count: 100, min: 1, mean: p95 / 2, p50: p95 / 2, p90: p95 * 0.9, p95, p99: p95 * 1.2, max: p95 * 2 });

/** A finished run's summary with these headline numbers (the rest plausible and fixed). */
function summary(p95: number, receiveRate: number, errors = 0): RunSummary {
  return {
    messages: { sent: 1000, received: 1000, lost: 0, duplicated: 0, outOfOrder: 0, sendRate: receiveRate, receiveRate },
    latency: lat(p95),
    sendLag: lat(1),
    connect: { opened: 2, failed: 0, latency: lat(3) },
    errors: errors > 0 ? { timeout: errors } : {},
    intervals: { measured: 3, warmup: 0, saturated: 0 },
    thresholds: [],
  };
}

async function finishedRun(planId: string | null, name: string, s: RunSummary, orgId = DEFAULT_ORG_ID, planVersion: number | null = null): Promise<string> {
  const run = await insertRun(env.h.db, { plan: doc(name), orgId, planId, planVersion });
  expect(await markRunRunning(env.h.db, run.id)).toBe(true);
  expect(await finishRun(env.h.db, run.id, { status: "passed", summary: s })).toBe(true);
  return run.id;
}

beforeAll(async () => {
  env = await startApiTestEnv();
  await env.h.db.insert(schema.orgs).values({ id: ORG_B, name: "B", slug: "compare-b" });
  tok.full = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "full", scopes: ["read", "run"] })).secret;
  tok.readOnly = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "ro", scopes: ["read"] })).secret;
  tok.orgB = (await createApiToken(env.h.db, { orgId: ORG_B, name: "b", scopes: ["read", "run"] })).secret;
  owner = await signUp("compare-owner@example.com", "Owner");
  viewer = await signUp("compare-viewer@example.com", "Viewer");
  outsider = await signUp("compare-outsider@example.com", "Outsider");
  // The viewer's first org (and so its active one) is its own; it is also a viewer of the default org.
  const [v] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, "compare-viewer@example.com"));
  await env.h.db.insert(schema.members).values({ id: newId("mem"), organizationId: DEFAULT_ORG_ID, userId: v!.id, role: "viewer" });
  userId.viewer = v!.id;
  const [o] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, "compare-outsider@example.com"));
  userId.outsider = o!.id;
  const runs = await import("@/app/api/v1/runs/route");
  const run = await import("@/app/api/v1/runs/[id]/route");
  const plan = await import("@/app/api/v1/plans/[id]/route");
  const baseline = await import("@/app/api/v1/plans/[id]/baseline/route");
  const shares = await import("@/app/api/v1/runs/[id]/shares/route");
  const shared = await import("@/app/api/v1/shares/[id]/route");
  r = {
    list: runs.GET,
    getRun: run.GET,
    patchRun: run.PATCH,
    patchPlan: plan.PATCH,
    setBaseline: baseline.PUT,
    clearBaseline: baseline.DELETE,
    trend: (await import("@/app/api/v1/plans/[id]/trend/route")).GET,
    share: shares.POST,
    shares: shares.GET,
    shared: shared.GET,
    revoke: shared.DELETE,
  };
  const sched = await import("@/app/api/v1/plans/[id]/schedule/route");
  r.getSchedule = sched.GET;
  r.putSchedule = sched.PUT;
  r.deleteSchedule = sched.DELETE;
  r.deliveries = (await import("@/app/api/v1/webhooks/[id]/deliveries/route")).GET;
  r.testWebhook = (await import("@/app/api/v1/webhooks/[id]/test/route")).POST;
  share = (await import("@/app/share/[id]/route")).GET;
});

afterAll(async () => {
  await env?.close();
});

const list = async (qs: string, creds: { token?: string; cookie?: string } = { token: tok.readOnly }) => {
  const res = await call(r.list!, "GET", `/api/v1/runs?${qs}`, creds);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { runs: RunListItem[]; next: string | null };
};

describe("tags and notes", () => {
  it("PATCH sets a run's and a plan's tags and notes; bad tags are named with the fix; other orgs get 404", async () => {
    const plan = await insertPlan(env.h.db, { orgId: DEFAULT_ORG_ID, document: doc("tagged plan") });
    const runId = await finishedRun(plan.id, "tagged run", summary(10, 100));
    const res = await call(
      r.patchRun!,
      "PATCH",
      `/api/v1/runs/${runId}`,
      { token: tok.full },
      { tags: ["release-2.3", "env:staging", "release-2.3"], notes: "after the pool fix" },
      { id: runId },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: runId, tags: ["release-2.3", "env:staging"], notes: "after the pool fix", planId: plan.id, baseline: false });
    // Only the field sent changes.
    const notesOnly = (await (
      await call(r.patchRun!, "PATCH", `/api/v1/runs/${runId}`, { token: tok.full }, { notes: "" }, { id: runId })
    ).json()) as RunWithMeta;
    expect(notesOnly).toMatchObject({ tags: ["release-2.3", "env:staging"], notes: "" });

    const bad = await call(r.patchRun!, "PATCH", `/api/v1/runs/${runId}`, { token: tok.full }, { tags: ["ok", "has space"] }, { id: runId });
    expect(bad.status).toBe(400);
    const err = await readError(bad);
    expect(err.issues?.[0]).toMatchObject({ path: "tags.1" });
    expect(err.message).toMatch(/tags are 1 to 40 characters/);
    expect((await call(r.patchRun!, "PATCH", `/api/v1/runs/${runId}`, { token: tok.full }, {}, { id: runId })).status).toBe(400);
    // A read-only token cannot, another org's token finds nothing.
    expect((await call(r.patchRun!, "PATCH", `/api/v1/runs/${runId}`, { token: tok.readOnly }, { notes: "x" }, { id: runId })).status).toBe(403);
    expect((await call(r.patchRun!, "PATCH", `/api/v1/runs/${runId}`, { token: tok.orgB }, { notes: "x" }, { id: runId })).status).toBe(404);

    const p = await call(
      r.patchPlan!,
      "PATCH",
      `/api/v1/plans/${plan.id}`,
      { token: tok.full },
      { tags: ["nightly"], notes: "the chat server's echo path" },
      { id: plan.id },
    );
    expect(p.status).toBe(200);
    expect(await p.json()).toMatchObject({ id: plan.id, version: 1, tags: ["nightly"], notes: "the chat server's echo path" });
  });
});

describe("run list filters and paging", () => {
  it("searches name and id, filters by plan, status, tag and dates, pages within the filter, and names a bad parameter", async () => {
    const plan = await insertPlan(env.h.db, { orgId: DEFAULT_ORG_ID, document: doc("filter plan") });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await finishedRun(plan.id, `Filter_Run ${i}`, summary(10 + i, 100)));
    const other = await finishedRun(null, "unrelated 100%", summary(5, 50));
    await call(r.patchRun!, "PATCH", `/api/v1/runs/${ids[1]}`, { token: tok.full }, { tags: ["canary"] }, { id: ids[1]! });
    await call(r.patchRun!, "PATCH", `/api/v1/runs/${ids[3]}`, { token: tok.full }, { tags: ["canary", "x"] }, { id: ids[3]! });
    const errored = await insertRun(env.h.db, { plan: doc("Filter_Run errored"), planId: plan.id });
    expect(await finishRun(env.h.db, errored.id, { status: "errored", reason: "test" })).toBe(true);
    // Another org's run with the same name never shows.
    await finishedRun(null, "Filter_Run of B", summary(1, 1), ORG_B);

    expect((await list("q=filter_run&limit=50")).runs.map((x) => x.name).sort()).toEqual([
      "Filter_Run 0",
      "Filter_Run 1",
      "Filter_Run 2",
      "Filter_Run 3",
      "Filter_Run 4",
      "Filter_Run errored",
    ]);
    // LIKE wildcards are searched for as themselves.
    expect((await list("q=100%25")).runs.map((x) => x.id)).toEqual([other]);
    expect((await list("q=_run")).runs.every((x) => x.name.includes("_Run"))).toBe(true);
    expect((await list(`q=${ids[2]!.slice(4, 14)}`)).runs.map((x) => x.id)).toEqual([ids[2]]);
    expect((await list(`planId=${plan.id}&status=errored`)).runs.map((x) => x.id)).toEqual([errored.id]);
    const canary = await list("tag=canary");
    expect(canary.runs.map((x) => x.id)).toEqual([ids[3], ids[1]]);
    expect(canary.runs[0]!.tags).toEqual(["canary", "x"]);

    // Dates: created today (UTC) vs a window that ended yesterday.
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect((await list(`planId=${plan.id}&from=${today}&to=${today}`)).runs).toHaveLength(6);
    expect((await list(`planId=${plan.id}&to=${yesterday}`)).runs).toHaveLength(0);
    expect((await list(`planId=${plan.id}&from=${new Date(Date.now() + 60_000).toISOString()}`)).runs).toHaveLength(0);

    // Pages of 2 within the filter: every run once, newest first, then next is null.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(`planId=${plan.id}&status=passed&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.runs.map((x) => x.id));
      cursor = page.next;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const bad = await call(r.list!, "GET", "/api/v1/runs?from=yesterday&tag=a%20b", { token: tok.readOnly });
    expect(bad.status).toBe(400);
    const err = await readError(bad);
    expect(err.code).toBe("invalid_query");
    expect(err.issues?.map((i) => i.path).sort()).toEqual(["from", "tag"]);
    expect(err.message).toMatch(/from: use a date \(2026-11-25\)/);
  });
});

describe("baselines and the plan trend", () => {
  it("marks a finished run of the plan as its baseline, refuses others by name, and flags regressions against it", async () => {
    const plan = await insertPlan(env.h.db, { orgId: DEFAULT_ORG_ID, document: doc("trend plan") });
    const base = await finishedRun(plan.id, "trend plan", summary(20, 1000));
    const same = await finishedRun(plan.id, "trend plan", summary(21, 980)); // within 10%
    const slow = await finishedRun(plan.id, "trend plan", summary(40, 1000), DEFAULT_ORG_ID, 2); // p95 doubled, on version 2
    const lossy = await finishedRun(plan.id, "trend plan", summary(20, 500, 100)); // half the throughput, errors
    const strange = await finishedRun(null, "inline", summary(1, 1));
    const running = await insertRun(env.h.db, { plan: doc("trend plan"), planId: plan.id });

    const put = (runId: string, token = tok.full) => call(r.setBaseline!, "PUT", `/api/v1/plans/${plan.id}/baseline`, { token }, { runId }, { id: plan.id });
    const notOurs = await put(strange);
    expect(notOurs.status).toBe(400);
    const e1 = await readError(notOurs);
    expect(e1.issues?.[0]?.path).toBe("runId");
    expect(e1.message).toMatch(/is not a run of plan .*inline plan/);
    const live = await put(running.id);
    expect(live.status).toBe(409);
    expect((await readError(live)).message).toMatch(/only a finished run with measurements can be a baseline/);
    // An inconclusive run judged nothing: no baseline (its own plan, so the trend below stays as it is).
    const searched = await insertPlan(env.h.db, { orgId: DEFAULT_ORG_ID, document: doc("capacity plan") });
    const unjudged = await insertRun(env.h.db, { plan: doc("capacity plan"), planId: searched.id });
    expect(await markRunRunning(env.h.db, unjudged.id)).toBe(true);
    const why = "no step of the capacity search could be judged: the step at 10/s per aggregate was limited by the load generator";
    expect(await finishRun(env.h.db, unjudged.id, { status: "inconclusive", reason: why, summary: summary(20, 1000) })).toBe(true);
    const inconclusive = await call(
      r.setBaseline!,
      "PUT",
      `/api/v1/plans/${searched.id}/baseline`,
      { token: tok.full },
      { runId: unjudged.id },
      { id: searched.id },
    );
    expect(inconclusive.status).toBe(409);
    expect((await readError(inconclusive)).message).toBe(
      `run ${unjudged.id} is inconclusive (${why}); a baseline must be a run whose measurements were judged: pick a passed or failed run of the plan`,
    );
    expect((await put(base, tok.readOnly)).status).toBe(403);
    const ok = await put(base);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ planId: plan.id, baselineRunId: base });

    const got = (await (await call(r.getRun!, "GET", `/api/v1/runs/${base}`, { token: tok.readOnly }, undefined, { id: base })).json()) as RunWithMeta;
    expect(got.baseline).toBe(true);
    const listed = await list(`planId=${plan.id}`);
    expect(listed.runs.filter((x) => x.baseline).map((x) => x.id)).toEqual([base]);

    const trendRes = await call(r.trend!, "GET", `/api/v1/plans/${plan.id}/trend`, { token: tok.readOnly }, undefined, { id: plan.id });
    expect(trendRes.status).toBe(200);
    const trend = (await trendRes.json()) as PlanTrend;
    expect(trend.baselineRunId).toBe(base);
    const by = Object.fromEntries(trend.points.map((p) => [p.runId, p]));
    expect(trend.points.map((p) => p.runId)).toEqual([base, same, slow, lossy]);
    expect(by[base]!.regressions).toEqual([]);
    expect(by[same]!.regressions).toEqual([]);
    expect(by[slow]!.regressions).toEqual(["p95"]);
    expect(by[lossy]!.regressions.sort()).toEqual(["errorRate", "receiveRate"]);
    expect(by[lossy]!.errors).toBe(100);
    // Which version each run ran, so a "regression" against a baseline of another version can say so.
    expect(by[slow]!.planVersion).toBe(2);
    expect(by[base]!.planVersion).toBeNull();
    expect(trend.baselinePlanVersion).toBeNull();

    expect((await call(r.clearBaseline!, "DELETE", `/api/v1/plans/${plan.id}/baseline`, { token: tok.full }, undefined, { id: plan.id })).status).toBe(204);
    const after = (await (
      await call(r.trend!, "GET", `/api/v1/plans/${plan.id}/trend`, { token: tok.readOnly }, undefined, { id: plan.id })
    ).json()) as PlanTrend;
    expect(after.baselineRunId).toBeNull();
    expect(after.points.every((p) => p.regressions.length === 0)).toBe(true);
    expect((await call(r.trend!, "GET", `/api/v1/plans/${plan.id}/trend`, { token: tok.orgB }, undefined, { id: plan.id })).status).toBe(404);
  });
});

describe("share links", () => {
  const open = (id: string, cookie?: string) =>
    share(request("GET", `/share/${id}`, cookie ? { cookie } : {}), ctx({ id }) as { params: Promise<{ id: string }> });

  it("show the run read-only to a member of its org without switching their active org, never to outsiders, and not once revoked", async () => {
    const runId = await finishedRun(null, "shared run", summary(7, 70));
    const created = await call(r.share!, "POST", `/api/v1/runs/${runId}/shares`, { cookie: owner }, undefined, { id: runId });
    expect(created.status).toBe(201);
    const { share: link } = (await created.json()) as { share: { id: string; path: string; runId: string } };
    expect(link).toMatchObject({ runId, path: `/share/${link.id}` });

    // The viewer's active org is its own: the run is not visible there, and opening the link does not change that.
    expect((await call(r.getRun!, "GET", `/api/v1/runs/${runId}`, { cookie: viewer }, undefined, { id: runId })).status).toBe(404);
    const viaApi = await call(r.shared!, "GET", `/api/v1/shares/${link.id}`, { cookie: viewer }, undefined, { id: link.id });
    expect(viaApi.status).toBe(200);
    expect(((await viaApi.json()) as RunWithMeta).id).toBe(runId);
    const activeOrg = async () => (await getAuth(new Headers()).api.getSession({ headers: new Headers({ cookie: viewer }) }))?.session.activeOrganizationId;
    const before = await activeOrg();
    expect(before).not.toBe(DEFAULT_ORG_ID);
    const opened = await open(link.id, viewer);
    expect(opened.status).toBe(303);
    expect(opened.headers.get("location")).toBe(`/share/${link.id}/view`);
    expect(await activeOrg()).toBe(before);
    expect((await call(r.getRun!, "GET", `/api/v1/runs/${runId}`, { cookie: viewer }, undefined, { id: runId })).status).toBe(404);
    expect((await call(r.patchRun!, "PATCH", `/api/v1/runs/${runId}`, { cookie: viewer }, { notes: "mine" }, { id: runId })).status).toBe(404);
    // The page it leads to shows the run read-only, loaded in the run's own org, for members only.
    const page = await loadSharedRun(link.id, userId.viewer);
    expect(page).toMatchObject({ orgName: expect.any(String), run: { id: runId, name: "shared run", status: "passed" }, intervals: [] });
    expect(page!.analysis).toBeDefined();
    expect(await loadSharedRun(link.id, userId.outsider)).toBeNull();
    expect(await loadSharedRun("shr_doesnotexist", userId.viewer)).toBeNull();

    // Outsiders and other orgs' tokens: the same 404 as for a link that never existed.
    const outside = await open(link.id, outsider);
    expect(outside.status).toBe(404);
    expect(await outside.text()).toMatch(/does not exist, was revoked, or is for an organization you are not a member of/);
    expect((await open("shr_doesnotexist", outsider)).status).toBe(404);
    expect((await call(r.shared!, "GET", `/api/v1/shares/${link.id}`, { cookie: outsider }, undefined, { id: link.id })).status).toBe(404);
    expect((await call(r.shared!, "GET", `/api/v1/shares/${link.id}`, { token: tok.orgB }, undefined, { id: link.id })).status).toBe(404);
    expect((await call(r.shared!, "GET", `/api/v1/shares/${link.id}`, { token: tok.readOnly }, undefined, { id: link.id })).status).toBe(200);
    // Signed out: sign in first, then come back to the link.
    const anon = await open(link.id);
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toBe(`/sign-in?next=${encodeURIComponent(`/share/${link.id}`)}`);

    expect((await call(r.revoke!, "DELETE", `/api/v1/shares/${link.id}`, { token: tok.orgB }, undefined, { id: link.id })).status).toBe(404);
    expect((await call(r.revoke!, "DELETE", `/api/v1/shares/${link.id}`, { token: tok.full }, undefined, { id: link.id })).status).toBe(204);
    expect((await open(link.id, viewer)).status).toBe(404);
    expect(await loadSharedRun(link.id, userId.viewer)).toBeNull();
    const listed = (await (await call(r.shares!, "GET", `/api/v1/runs/${runId}/shares`, { token: tok.readOnly }, undefined, { id: runId })).json()) as {
      shares: { id: string; revokedAt: string | null }[];
    };
    expect(listed.shares).toHaveLength(1);
    expect(listed.shares[0]!.revokedAt).not.toBeNull();
  });
});

describe("plan schedules", () => {
  it("PUT names a bad cron or time zone, saves a good one with its next run and a BullMQ job scheduler; pausing and deleting remove the scheduler", async () => {
    const plan = await insertPlan(env.h.db, { orgId: DEFAULT_ORG_ID, document: doc("scheduled plan") });
    const put = (body: unknown, token = tok.full) => call(r.putSchedule!, "PUT", `/api/v1/plans/${plan.id}/schedule`, { token }, body, { id: plan.id });
    const refused = async (body: unknown, path: string, message: RegExp) => {
      const res = await put(body);
      expect(res.status).toBe(400);
      const err = await readError(res);
      expect(err.code).toBe("invalid_body");
      expect(err.issues?.map((i) => i.path)).toEqual([path]);
      expect(err.message).toMatch(message);
    };
    await refused({ cron: "61 * * * *" }, "cron", /^cron: "61 \* \* \* \*" .*use 5 fields/);
    await refused({ cron: "every day" }, "cron", /has 2 fields; use 5 fields/);
    await refused({ cron: "* * * * * *" }, "cron", /fires every 1 s; a schedule may start a run at most once a minute/);
    await refused({ cron: "0 3 * * *", timezone: "Mars/Olympus" }, "timezone", /"Mars\/Olympus" is not a time zone/);
    expect((await put({ cron: "0 3 * * *" }, tok.readOnly)).status).toBe(403);
    expect((await call(r.putSchedule!, "PUT", `/api/v1/plans/${plan.id}/schedule`, { token: tok.orgB }, { cron: "0 3 * * *" }, { id: plan.id })).status).toBe(
      404,
    );

    const created = await put({ cron: "0 3 * * *", timezone: "Europe/Berlin" });
    expect(created.status).toBe(201);
    const s1 = (await created.json()) as { id: string; cron: string; enabled: boolean; nextRunAt: string; lastRunAt: string | null };
    expect(s1).toMatchObject({ cron: "0 3 * * *", enabled: true, lastRunAt: null });
    // 03:00 in Berlin is 01:00 or 02:00 UTC, within the next day.
    const next = new Date(s1.nextRunAt);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(next.getTime()).toBeLessThanOrEqual(Date.now() + 86_400_000);
    expect([1, 2]).toContain(next.getUTCHours());
    expect(next.getUTCMinutes()).toBe(0);
    const queue = new Queue(QUEUE_NAMES.schedules, { connection: { url: env.redisUrl } });
    try {
      expect(await nextPlanFiring(queue, plan.id)).toBe(next.getTime());
      const got = await call(r.getSchedule!, "GET", `/api/v1/plans/${plan.id}/schedule`, { token: tok.readOnly }, undefined, { id: plan.id });
      expect(await got.json()).toEqual(s1);

      const paused = await put({ cron: "30 4 * * 1-5", enabled: false });
      expect(paused.status).toBe(200);
      expect(await paused.json()).toMatchObject({ id: s1.id, cron: "30 4 * * 1-5", enabled: false, nextRunAt: null });
      expect(await nextPlanFiring(queue, plan.id)).toBeNull();
      expect((await put({ cron: "30 4 * * 1-5" })).status).toBe(200);
      expect(await nextPlanFiring(queue, plan.id)).not.toBeNull();

      // A new version of a scheduled plan is admitted as a run would be: no target the install refuses.
      const putPlan = (await import("@/app/api/v1/plans/[id]/route")).PUT;
      const elsewhere = { ...doc("scheduled plan"), target: { ...doc("x").target, url: "ws://10.20.30.40:9001/echo" } };
      const refusedSave = await call(putPlan, "PUT", `/api/v1/plans/${plan.id}`, { token: tok.full }, { plan: elsewhere }, { id: plan.id });
      expect(refusedSave.status).toBe(403);
      const why = await readError(refusedSave);
      expect(why.code).toBe("target_refused");
      expect(why.message).toMatch(/10\.20\.30\.40/);

      expect((await call(r.deleteSchedule!, "DELETE", `/api/v1/plans/${plan.id}/schedule`, { token: tok.full }, undefined, { id: plan.id })).status).toBe(204);
      expect(await nextPlanFiring(queue, plan.id)).toBeNull();
      expect((await call(r.getSchedule!, "GET", `/api/v1/plans/${plan.id}/schedule`, { token: tok.readOnly }, undefined, { id: plan.id })).status).toBe(404);
    } finally {
      await queue.close();
    }
  });
});

describe("webhook deliveries API", () => {
  it("lists a webhook's attempts newest first for its org's admins only; a deleted webhook takes no test", async () => {
    const hook = await createWebhook(env.h.db, { orgId: DEFAULT_ORG_ID, url: "https://ci.example.com/volley", events: ["run.finished"] }, null);
    const attempt = { webhookId: hook.id, event: "run.finished", runId: "run_x", test: false, durationMs: 12.5 };
    await recordWebhookDelivery(env.h.db, { ...attempt, deliveryId: "d1", attempt: 1, status: 503, ok: false, error: "answered 503", responseExcerpt: "busy" });
    await recordWebhookDelivery(env.h.db, { ...attempt, deliveryId: "d1", attempt: 2, status: 200, ok: true, error: null, responseExcerpt: "ok" });
    const path = `/api/v1/webhooks/${hook.id}/deliveries`;
    const res = await call(r.deliveries!, "GET", `${path}?limit=5`, { cookie: owner }, undefined, { id: hook.id });
    expect(res.status).toBe(200);
    const { deliveries } = (await res.json()) as { deliveries: { attempt: number; status: number | null; ok: boolean; responseExcerpt: string | null }[] };
    expect(deliveries.map((d) => [d.attempt, d.status, d.ok, d.responseExcerpt])).toEqual([
      [2, 200, true, "ok"],
      [1, 503, false, "busy"],
    ]);
    // Another org's admin finds no such webhook; a viewer of this org (made active here) and API tokens (admin routes are sessions only) may not look.
    await getAuth(new Headers()).api.setActiveOrganization({ headers: new Headers({ cookie: viewer }), body: { organizationId: DEFAULT_ORG_ID } });
    expect((await call(r.deliveries!, "GET", path, { cookie: outsider }, undefined, { id: hook.id })).status).toBe(404);
    expect((await call(r.deliveries!, "GET", path, { cookie: viewer }, undefined, { id: hook.id })).status).toBe(403);
    expect((await call(r.deliveries!, "GET", path, { token: tok.full }, undefined, { id: hook.id })).status).toBe(403);
    const bad = await call(r.deliveries!, "GET", `${path}?limit=1000`, { cookie: owner }, undefined, { id: hook.id });
    expect((await readError(bad)).issues?.[0]?.path).toBe("limit");

    await disableWebhook(env.h.db, DEFAULT_ORG_ID, hook.id);
    const gone = await call(r.testWebhook!, "POST", `/api/v1/webhooks/${hook.id}/test`, { cookie: owner }, undefined, { id: hook.id });
    expect(gone.status).toBe(409);
    expect((await readError(gone)).message).toMatch(/was deleted; add it again/);
  });
});
