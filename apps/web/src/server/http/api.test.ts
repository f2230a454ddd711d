import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import "@volley/devstack/vitest-context";
import { leaseRedisDb, type RedisDbLease } from "@volley/devstack";
import { COUNTERS, HISTOGRAMS, REDIS_KEYS, type IntervalFrame, type IntervalPoint, type Plan, type Run } from "@volley/contracts";
import {
  createApiToken,
  createDb,
  createTestDatabase,
  DEFAULT_ORG_ID,
  getRun,
  insertFrames,
  insertRun,
  insertShards,
  markRunRunning,
  type DbHandle,
} from "@volley/db";
import { evaluateThresholds, IntervalRecorder, summarizeFrames } from "@volley/metrics";
import { QUEUE_NAMES, runJob } from "@volley/queue";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { z } from "zod";
import type { RunListItem } from "@/lib/types";
import type { RouteHandler } from "./api-handler";
import { connectTestAgent } from "../test-support/api-test-env";

// Route handlers are called directly with `new Request(...)`. env.ts reads process.env per request,
// so setting the variables before the first request is enough.
type Routes = {
  createRun: RouteHandler;
  listRuns: RouteHandler;
  getRun: RouteHandler;
  intervals: RouteHandler;
  abort: RouteHandler;
  validate: RouteHandler;
  importPlan: RouteHandler;
};
let routes: Routes;
let closeServices: () => Promise<void>;
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let h: DbHandle;
let redis: Redis;
let lease: RedisDbLease;
let queue: Queue;
/** A real API token of the default org (read + run), sent as a Bearer header on every request. */
let bearer = "";

const BASE = "http://web.test";

beforeAll(async () => {
  testDb = await createTestDatabase(inject("databaseServerUrl"));
  lease = await leaseRedisDb(inject("redisUrl"));
  process.env.DATABASE_URL = testDb.url;
  process.env.REDIS_URL = lease.url;
  process.env.LOG_LEVEL = "silent";
  h = createDb(testDb.url, 2);
  redis = new Redis(lease.url, { maxRetriesPerRequest: null });
  queue = new Queue(QUEUE_NAMES.runs, { connection: redis });
  ({ secret: bearer } = await createApiToken(h.db, { orgId: DEFAULT_ORG_ID, name: "api test", scopes: ["read", "run"] }));
  await connectTestAgent(h.db, DEFAULT_ORG_ID); // runs are refused when their pool has no agent
  const runsRoute = await import("@/app/api/v1/runs/route");
  routes = {
    createRun: runsRoute.POST,
    listRuns: runsRoute.GET,
    getRun: (await import("@/app/api/v1/runs/[id]/route")).GET,
    intervals: (await import("@/app/api/v1/runs/[id]/intervals/route")).GET,
    abort: (await import("@/app/api/v1/runs/[id]/abort/route")).POST,
    validate: (await import("@/app/api/v1/plans/validate/route")).POST,
    importPlan: (await import("@/app/api/v1/plans/import/route")).POST,
  };
  ({ closeServices } = await import("./services"));
});

afterAll(async () => {
  await closeServices?.();
  await queue?.close();
  redis?.disconnect();
  await h?.close();
  await testDb?.drop();
  await lease?.release();
});

const ctx = (params: Record<string, string> = {}) => ({ params: Promise.resolve(params) });
const authHeader = () => ({ authorization: `Bearer ${bearer}` });
const post = (path: string, body: unknown) =>
  new Request(`${BASE}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...authHeader() },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const get = (path: string) => new Request(`${BASE}${path}`, { headers: authHeader() });

const errorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), issues: z.array(z.object({ path: z.string(), message: z.string() })).optional() }),
});
async function readError(res: Response) {
  return errorBody.parse(await res.json()).error;
}

const validPlanInput = {
  name: "api test",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: 2, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 5 }, duration: "3s", warmup: "1s" },
  thresholds: ["latency.p95 < 200ms", "errors.rate < 1%"],
};

const plan: Plan = {
  name: "stored",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws", connectTimeout: "10s" },
  connections: { count: 2, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 5, per: "connection", arrival: "constant", timeout: "10s" }, duration: "3s", warmup: "1s" },
  thresholds: ["latency.p95 < 200ms", "errors.rate < 1%"],
  agents: { pool: "default", count: 2 },
};

const health = { cpu: 5, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 80, sendLagMaxMs: 1, saturated: false };

function frame(runId: string, shardId: string, seq: number, latenciesMs: number[], warmup = false): IntervalFrame {
  const r = new IntervalRecorder();
  for (const ms of latenciesMs) {
    r.recordMicros(HISTOGRAMS.messageLatency, ms * 1000);
    r.recordMicros(HISTOGRAMS.sendLag, 200);
    r.increment(COUNTERS.sent);
    r.increment(COUNTERS.received);
  }
  r.setGauge(COUNTERS.connectionsActive, 1);
  if (seq === 0) r.increment(`errors.timeout`);
  return { runId, shardId, agentId: "agt_test", seq, index: seq, startedAt: 1_700_000_000_000 + seq * 1000, durationMs: 1000, warmup, ...r.take(), health };
}

beforeEach(() => {
  process.env.DATABASE_URL = testDb.url;
});

describe("POST /api/v1/runs", () => {
  it("queues a valid plan: 201 {id}, a queued row and runJob {runId} on the runs queue", async () => {
    const res = await routes.createRun(post("/api/v1/runs", { plan: validPlanInput }), ctx());
    expect(res.status).toBe(201);
    const { id } = z.object({ id: z.string() }).parse(await res.json());
    expect(id).toMatch(/^run_/);

    const row = await getRun(h.db, id);
    expect(row?.status).toBe("queued");
    expect(row?.plan.connections.count).toBe(2);
    expect(row?.plan.target.connectTimeout).toBe("10s"); // defaults filled in

    const job = await queue.getJob(id);
    expect(job?.name).toBe(runJob.name);
    expect(job?.data).toEqual({ runId: id });
    expect(await job?.getState()).toBe("waiting");
  });

  it("refuses a target outside the allowlist (self-hosted: loopback only by default) and queues nothing", async () => {
    const before = (await queue.getJobCounts("waiting")).waiting;
    const res = await routes.createRun(
      post("/api/v1/runs", { plan: { ...validPlanInput, target: { url: "ws://10.20.30.40:9001/echo", protocol: "ws" } } }),
      ctx(),
    );
    expect(res.status).toBe(403);
    const err = await readError(res);
    expect(err.code).toBe("target_refused");
    expect(err.message).toContain("VOLLEY_TARGET_ALLOWLIST");
    expect((await queue.getJobCounts("waiting")).waiting).toBe(before);
  });

  it("rejects an invalid plan with 400 invalid_body naming every offending field", async () => {
    const bad = {
      ...validPlanInput,
      target: { url: "ftp://nowhere", protocol: "carrier-pigeon" },
      connections: { count: 0 },
      scenario: { kind: "echo", message: { rate: -1 }, duration: "ten seconds" },
    };
    const res = await routes.createRun(post("/api/v1/runs", { plan: bad }), ctx());
    expect(res.status).toBe(400);
    const err = await readError(res);
    expect(err.code).toBe("invalid_body");
    const paths = ["plan.target.url", "plan.target.protocol", "plan.connections.count", "plan.scenario.message.rate", "plan.scenario.duration"];
    for (const p of paths) expect(err.message).toContain(`${p}: `);
    expect(err.issues?.map((i) => i.path)).toEqual(expect.arrayContaining(paths));
    expect(err.message).toMatch(/plan\.connections\.count: Too small: expected number to be >=1/);
    expect((await queue.getJobCounts("waiting")).waiting).toBe(1); // only the valid run above
  });

  it("rejects a body without a plan and unknown top-level fields", async () => {
    const res = await routes.createRun(post("/api/v1/runs", { plan: validPlanInput, extra: true }), ctx());
    expect(res.status).toBe(400);
    const err = await readError(res);
    expect(err.issues?.map((i) => i.path)).toContain("(root)");
    const missing = await readError(await routes.createRun(post("/api/v1/runs", {}), ctx()));
    expect(missing.issues?.[0]?.path).toBe("plan");
  });

  it("words a field left out as required, with what belongs there and an example", async () => {
    const { message: _, ...scenario } = validPlanInput.scenario;
    const err = await readError(await routes.createRun(post("/api/v1/runs", { plan: { ...validPlanInput, scenario } }), ctx()));
    expect(err.code).toBe("invalid_body");
    expect(err.issues).toEqual([
      { path: "plan.scenario.message", message: expect.stringMatching(/^required: the messages each connection sends, like message: \{ rate: 10 \}/) },
    ]);
  });

  it("answers malformed or empty JSON with 400 invalid_json", async () => {
    const res = await routes.createRun(post("/api/v1/runs", '{"plan": {'), ctx());
    expect(res.status).toBe(400);
    const err = await readError(res);
    expect(err.code).toBe("invalid_json");
    expect(err.message).toMatch(/not valid JSON/);
    const empty = await routes.createRun(post("/api/v1/runs", ""), ctx());
    expect(empty.status).toBe(400);
    expect((await readError(empty)).code).toBe("invalid_json");
  });
});

describe("GET /api/v1/runs/{id}", () => {
  it("answers an unknown id with 404 not_found", async () => {
    const res = await routes.getRun(get("/api/v1/runs/run_nope"), ctx({ id: "run_nope" }));
    expect(res.status).toBe(404);
    expect((await readError(res)).code).toBe("not_found");
    const iv = await routes.intervals(get("/api/v1/runs/run_nope/intervals"), ctx({ id: "run_nope" }));
    expect(iv.status).toBe(404);
  });

  it("returns a running run with the summary merged live from its stored frames", async () => {
    const row = await insertRun(h.db, { plan });
    await markRunRunning(h.db, row.id);
    const [a, b] = await insertShards(h.db, row.id, [plan, plan]);
    const frames = [
      frame(row.id, a!.id, 0, [500], true), // warm-up: left out of percentiles
      frame(row.id, a!.id, 1, [10, 11, 12, 13]),
      frame(row.id, b!.id, 1, [40, 80]),
      frame(row.id, a!.id, 2, [14, 15]),
    ];
    await insertFrames(h.db, frames);

    const res = await routes.getRun(get(`/api/v1/runs/${row.id}`), ctx({ id: row.id }));
    expect(res.status).toBe(200);
    const run = (await res.json()) as Run;
    expect(run).toMatchObject({ id: row.id, status: "running", name: "stored", reason: null, endedAt: null });
    expect(run.startedAt).not.toBeNull();
    const expected = summarizeFrames(frames);
    expect(run.summary).toEqual({ ...expected, thresholds: evaluateThresholds(plan.thresholds, expected) });
    expect(run.summary?.messages.sent).toBe(9);
    expect(run.summary?.latency.max).toBeCloseTo(80, 0);
    expect(run.summary?.errors).toEqual({ timeout: 1 });
    expect(run.summary?.thresholds.map((t) => t.expression)).toEqual(plan.thresholds);

    const iv = await routes.intervals(get(`/api/v1/runs/${row.id}/intervals`), ctx({ id: row.id }));
    const { intervals } = (await iv.json()) as { intervals: IntervalPoint[] };
    expect(intervals.map((p) => [p.index, p.sent, p.connections, p.warmup])).toEqual([
      [0, 1, 1, true],
      [1, 6, 2, false],
      [2, 2, 1, false],
    ]);

    // The same timeline as CSV, and the run as JUnit XML (one testcase per threshold + the run).
    const { GET: csvRoute } = await import("@/app/api/v1/runs/[id]/intervals.csv/route");
    const csv = await csvRoute(get(`/api/v1/runs/${row.id}/intervals.csv`), ctx({ id: row.id }));
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const lines = (await csv.text()).trim().split("\n");
    expect(lines).toHaveLength(1 + intervals.length);
    const { GET: junitRoute } = await import("@/app/api/v1/runs/[id]/junit/route");
    const junit = await junitRoute(get(`/api/v1/runs/${row.id}/junit`), ctx({ id: row.id }));
    expect(junit.headers.get("content-type")).toContain("application/xml");
    const xml = await junit.text();
    expect(xml).toMatch(/^<\?xml/);
    expect(xml.match(/<testcase /g)).toHaveLength(plan.thresholds.length + 1);
    expect((await junitRoute(get("/api/v1/runs/run_nope/junit"), ctx({ id: "run_nope" }))).status).toBe(404);
    expect(intervals[1]?.max).toBeCloseTo(80, 0);
  });

  it("returns the stored summary of a finished run and lists runs newest first", async () => {
    const res = await routes.listRuns(get("/api/v1/runs"), ctx());
    expect(res.status).toBe(200);
    const { runs } = (await res.json()) as { runs: RunListItem[] };
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const times = runs.map((r) => Date.parse(r.createdAt));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    expect(runs[0]).not.toHaveProperty("plan");
    const bad = await routes.listRuns(get("/api/v1/runs?limit=0"), ctx());
    expect(bad.status).toBe(400);
  });
});

describe("POST /api/v1/runs/{id}/abort", () => {
  it("finishes a queued run as aborted", async () => {
    const row = await insertRun(h.db, { plan });
    const res = await routes.abort(post(`/api/v1/runs/${row.id}/abort`, ""), ctx({ id: row.id }));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ id: row.id, status: "aborted", abort: "done" });
    const after = await getRun(h.db, row.id);
    expect(after?.status).toBe("aborted");
    expect(after?.reason).toBe("aborted by user");
    expect(after?.endedAt).not.toBeNull();

    const again = await routes.abort(post(`/api/v1/runs/${row.id}/abort`, ""), ctx({ id: row.id }));
    expect(again.status).toBe(409);
  });

  it("asks the hub to stop a running run over pub/sub", async () => {
    const row = await insertRun(h.db, { plan });
    await markRunRunning(h.db, row.id);
    const sub = redis.duplicate();
    const received = new Promise<string>((resolve) => sub.on("message", (_channel: string, message: string) => resolve(message)));
    await sub.subscribe(REDIS_KEYS.abort);
    try {
      const res = await routes.abort(post(`/api/v1/runs/${row.id}/abort`, ""), ctx({ id: row.id }));
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ id: row.id, status: "running", abort: "requested" });
      expect(JSON.parse(await received)).toEqual({ runId: row.id, reason: "aborted by user" });
      expect((await getRun(h.db, row.id))?.status).toBe("running"); // the hub finishes it
    } finally {
      sub.disconnect();
    }
  });
});

describe("POST /api/v1/plans/validate", () => {
  it("accepts a plan as JSON or as YAML and returns it with defaults", async () => {
    const json = await routes.validate(post("/api/v1/plans/validate", validPlanInput), ctx());
    expect(json.status).toBe(200);
    expect(await json.json()).toMatchObject({ ok: true, plan: { agents: { pool: "default", count: 1 } } });
    const yaml =
      "name: y\ntarget: { url: ws://127.0.0.1:9001/echo }\nconnections: { count: 1 }\nscenario: { kind: echo, message: { rate: 1 }, duration: 1s }\n";
    const res = await routes.validate(post("/api/v1/plans/validate", { yaml }), ctx());
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, plan: { name: "y", connections: { count: 1, rate: 100 } } });
  });

  it("names every bad field, and YAML syntax errors", async () => {
    const res = await routes.validate(post("/api/v1/plans/validate", { ...validPlanInput, connections: { count: 0 }, name: "" }), ctx());
    expect(res.status).toBe(400);
    const err = await readError(res);
    expect(err.issues?.map((i) => i.path)).toEqual(expect.arrayContaining(["name", "connections.count"]));
    const syntax = await readError(await routes.validate(post("/api/v1/plans/validate", { yaml: "name: [unclosed" }), ctx()));
    expect(syntax.issues?.[0]?.path).toBe("(document)");
  });

  it("refuses misspelled threshold metrics before any run, naming the nearest known one", async () => {
    const res = await routes.validate(
      post("/api/v1/plans/validate", { ...validPlanInput, thresholds: ["latncy.p95 < 200ms", "foo.bar < 1", "delivery.p95 < 200ms"] }),
      ctx(),
    );
    expect(res.status).toBe(400);
    const err = await readError(res);
    expect(err.issues?.map((i) => i.path)).toEqual(["thresholds.0", "thresholds.1"]);
    expect(err.issues?.[0]?.message).toMatch(/^unknown metric "latncy.p95" \(did you mean "latency.p95"\?\); known metrics: /);
  });
});

describe("POST /api/v1/plans/import", () => {
  const fixtures = new URL("../../../../../packages/plan-import/fixtures/", import.meta.url);
  const read = (name: string) => readFileSync(new URL(name, fixtures), "utf8");

  it("turns the recorded chat HAR into plan YAML that validates, with notes", async () => {
    const res = await routes.importPlan(
      post("/api/v1/plans/import", { format: "har", content: read("socketio-chat.har"), targetUrl: "http://127.0.0.1:9010" }),
      ctx(),
    );
    expect(res.status).toBe(200);
    const body = z.object({ plan: z.string(), notes: z.array(z.string()) }).parse(await res.json());
    const checked = await routes.validate(post("/api/v1/plans/validate", { yaml: body.plan }), ctx());
    expect(checked.status).toBe(200);
    expect(await checked.json()).toMatchObject({
      plan: { target: { url: "http://127.0.0.1:9010/", protocol: "socketio" }, flow: { messages: [{ event: "chat" }] } },
    });
    expect(body.notes.join("\n")).toMatch(/schedule is a small default/);
  });

  it("moves a login recorded on another origin with origins, and refuses a key that is not an origin naming the field", async () => {
    const content = read("ws-shop-sso.har");
    const login = (JSON.parse(content) as { log: { entries: { request: { method: string; url: string } }[] } }).log.entries.find(
      (e) => e.request.method === "POST",
    )!;
    const res = await routes.importPlan(
      post("/api/v1/plans/import", { format: "har", content, origins: { [new URL(login.request.url).origin]: "http://127.0.0.1:9005" } }),
      ctx(),
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { plan: string }).plan).toContain("url: http://127.0.0.1:9005/api/login");
    const bad = await routes.importPlan(
      post("/api/v1/plans/import", { format: "har", content, origins: { "auth.example.com": "http://127.0.0.1:9005" } }),
      ctx(),
    );
    expect(bad.status).toBe(400);
    expect((await readError(bad)).issues?.[0]).toMatchObject({ path: "origins.auth.example.com" });
  });

  it("takes Artillery payload files by name", async () => {
    const res = await routes.importPlan(
      post("/api/v1/plans/import", { format: "artillery", content: read("artillery/socketio-chat.yml"), files: { "users.csv": "username,password\nann,x\n" } }),
      ctx(),
    );
    expect(res.status).toBe(200);
    const { plan } = (await res.json()) as { plan: string };
    expect(plan).toContain("username,password");
    expect(plan).toContain("{{ data.username }}");
  });

  it("400 names the bad field or what makes the content unusable", async () => {
    const format = await readError(await routes.importPlan(post("/api/v1/plans/import", { format: "postman", content: "{}" }), ctx()));
    expect(format.code).toBe("invalid_body");
    expect(format.issues?.map((i) => i.path)).toEqual(["format"]);
    const notHar = await readError(await routes.importPlan(post("/api/v1/plans/import", { format: "har", content: JSON.stringify({ log: {} }) }), ctx()));
    expect(notHar.issues).toEqual([{ path: "content", message: "not a HAR: log.entries missing (a HAR file is { log: { entries: [...] } })" }]);
  });
});

describe("configuration and unexpected errors", () => {
  it("answers 500 misconfigured naming the missing variable", async () => {
    delete process.env.DATABASE_URL;
    const res = await routes.listRuns(get("/api/v1/runs"), ctx());
    expect(res.status).toBe(500);
    const err = await readError(res);
    expect(err.code).toBe("misconfigured");
    expect(err.message).toMatch(/^DATABASE_URL is not set — /);
    process.env.DATABASE_URL = "mysql://x";
    expect((await readError(await routes.listRuns(get("/api/v1/runs"), ctx()))).message).toMatch(/DATABASE_URL .* must be a PostgreSQL URL/);
  });

  it("answers unknown errors with a generic 500 internal that leaks nothing", async () => {
    const { apiHandler } = await import("./api-handler");
    const boom = apiHandler({
      permission: "runs:read",
      handler: async () => {
        throw new Error("secret connection string postgres://u:p@db");
      },
    });
    const res = await boom(get("/api/v1/boom"), ctx());
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("secret");
    expect(text).not.toContain("at ");
    expect(JSON.parse(text)).toMatchObject({ error: { code: "internal" } });
  });
});
