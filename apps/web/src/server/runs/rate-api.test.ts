import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planSchema, REDIS_KEYS, type PlanInput } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, getRun, insertRun, markRunRunning } from "@volley/db";
import { Redis } from "ioredis";
import type { RouteHandler } from "../http/api-handler";
import { call, readError, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

let env: ApiTestEnv;
let rate: RouteHandler;
let getRunRoute: RouteHandler;
let token = "";
let readOnly = "";

beforeAll(async () => {
  env = await startApiTestEnv();
  ({ secret: token } = await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "ci", scopes: ["read", "run"] }));
  ({ secret: readOnly } = await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "viewer", scopes: ["read"] }));
  rate = (await import("@/app/api/v1/runs/[id]/rate/route")).POST;
  getRunRoute = (await import("@/app/api/v1/runs/[id]/route")).GET;
});
afterAll(async () => {
  await env?.close();
});

const echo: PlanInput = {
  name: "rate api",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: 10, rate: 100 },
  scenario: { kind: "echo", message: { rate: 5 }, duration: "5m" },
};

async function runningRun(input: PlanInput = echo): Promise<string> {
  const row = await insertRun(env.h.db, { plan: planSchema.parse(input) });
  await markRunRunning(env.h.db, row.id);
  return row.id;
}

const post = (id: string, body: unknown, secret = token) => call(rate, "POST", `/api/v1/runs/${id}/rate`, { token: secret }, body, { id });

describe("POST /api/v1/runs/{id}/rate", () => {
  it("records the change in the run and publishes it for the hubs, applying a second from now", async () => {
    const id = await runningRun();
    const sub = new Redis(env.redisUrl);
    const published = new Promise<string>((resolve) => sub.on("message", (_c: string, m: string) => resolve(m)));
    await sub.subscribe(REDIS_KEYS.rate);
    try {
      const before = Date.now();
      const res = await post(id, { rate: 20 });
      expect(res.status).toBe(202);
      const body = (await res.json()) as { change: { at: number; scale: number; rate: number; unit: string; by: string } };
      expect(body.change).toMatchObject({ scale: 4, rate: 20, unit: "msg/s per connection", by: expect.stringMatching(/^API token /) });
      expect(body.change.at).toBeGreaterThanOrEqual(before + 1000);
      expect(JSON.parse(await published)).toEqual({ runId: id, scale: 4, at: body.change.at, what: "rate" });
    } finally {
      sub.disconnect();
    }
    // A second change goes back to the plan's rate; both are on the run, in order, in the API's answer.
    expect((await post(id, { scale: 1 })).status).toBe(202);
    const run = (await (await call(getRunRoute, "GET", `/api/v1/runs/${id}`, { token }, undefined, { id })).json()) as { rateChanges: { scale: number }[] };
    expect(run.rateChanges.map((c) => c.scale)).toEqual([4, 1]);
    expect((await getRun(env.h.db, id))?.rateChanges).toHaveLength(2);
  });

  it("changes how many connections are open, over every agent", async () => {
    const id = await runningRun();
    const res = await post(id, { connections: 25 });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { change: unknown }).change).toMatchObject({ scale: 2.5, rate: 25, unit: "connections" });
    expect((await readError(await post(id, { connections: 2.5 }))).code).toBe("invalid_body");
  });

  it("users plans change their arrival rate", async () => {
    const id = await runningRun({
      name: "users",
      target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
      connections: { count: 100 },
      scenario: { kind: "users", arrivalRate: 4, duration: "5m" },
      flow: { steps: [{ connect: {} }] },
    });
    const res = await post(id, { rate: 2 });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { change: unknown }).change).toMatchObject({ scale: 0.5, rate: 2, unit: "users/s" });
    const connections = await post(id, { connections: 10 });
    expect(connections.status).toBe(409);
    expect((await readError(connections)).message).toMatch(/change their arrival rate instead/);
  });

  it("refuses what cannot change, naming the field and the fix", async () => {
    const id = await runningRun();
    const both = await readError(await post(id, { rate: 10, scale: 2 }));
    expect(both).toMatchObject({ code: "invalid_body", message: expect.stringMatching(/give one of "rate" .*, "scale" .* or "connections"/) });
    const none = await readError(await post(id, {}));
    expect(none.code).toBe("invalid_body");
    const far = await readError(await post(id, { rate: 5000 }));
    expect(far.message).toMatch(/rate: 5000 msg\/s per connection is more than 100× away from the plan's 5/);
    expect((await post(id, { scale: 0 })).status).toBe(400);

    const queued = (await insertRun(env.h.db, { plan: planSchema.parse(echo) })).id;
    const q = await post(queued, { scale: 2 });
    expect(q.status).toBe(409);
    expect((await readError(q)).message).toMatch(/is queued: only a running run's rate can change/);

    const staged = await runningRun({ ...echo, connections: { count: 10, stages: [{ duration: "1m", target: 10 }] } });
    const s = await post(staged, { scale: 2 });
    expect(s.status).toBe(409);
    expect((await readError(s)).message).toMatch(/connections\.stages/);

    expect((await post("run_nope", { scale: 2 })).status).toBe(404);
    expect((await post(id, { scale: 2 }, readOnly)).status).toBe(403);
    expect((await getRun(env.h.db, id))?.rateChanges).toEqual([]);
  });
});
