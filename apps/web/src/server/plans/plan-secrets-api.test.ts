import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET_MARKER, type PlanRecord, type PlanVersion, type Run } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, schema } from "@volley/db";
import { eq, sql } from "drizzle-orm";
import { parse } from "yaml";
import type { RouteHandler } from "../http/api-handler";
import { call, connectTestAgent, readError, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// Target credentials in plans: sealed at rest (no database read shows them), read back exactly by
// those who may change the plan, redacted for viewers and read tokens, and kept when sent back redacted.

let env: ApiTestEnv;
const tokens = { write: "", read: "" };
let owner = "";
let routes: Record<"create" | "list" | "get" | "put" | "versions" | "startRun" | "getRun", RouteHandler>;

const SECRETS = ["Bearer hdr-5c1e7a", "stomp-pass-9d4b", "login-pw-3f8a", "mqtt-pw-72c0"];
const stompYaml = `# a STOMP plan that logs in first
name: stomp with secrets
target:
  url: ws://127.0.0.1:15674/ws
  protocol: stomp
  headers:
    Authorization: Bearer hdr-5c1e7a   # the gateway's token
  stomp: { login: guest, passcode: stomp-pass-9d4b }
connections: { count: 1 }
scenario: { kind: echo, duration: 2s, message: { rate: 1 } }
flow:
  setup:
    - request:
        method: POST
        url: http://127.0.0.1:9/login
        json: { user: ann, password: login-pw-3f8a }
`;
const mqttPlan = {
  name: "mqtt with secrets",
  target: { url: "ws://127.0.0.1:8080/mqtt", protocol: "mqtt", mqtt: { username: "u", password: "mqtt-pw-72c0" } },
  connections: { count: 1 },
  scenario: { kind: "echo", duration: "2s", message: { rate: 1 } },
};

const storedRows = async () =>
  JSON.stringify([
    (await env.h.db.execute(sql`select document, source, secrets from plans`)).rows,
    (await env.h.db.execute(sql`select document, source, secrets from plan_versions`)).rows,
    (await env.h.db.execute(sql`select plan, secrets from runs`)).rows,
  ]);
const get = async (creds: { token?: string; cookie?: string }, id: string) =>
  (await (await call(routes.get, "GET", `/api/v1/plans/${id}`, creds, undefined, { id })).json()) as PlanRecord;

beforeAll(async () => {
  process.env.VOLLEY_SECRETS_KEY = randomBytes(32).toString("base64");
  env = await startApiTestEnv();
  tokens.write = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "w", scopes: ["read", "run"] })).secret;
  tokens.read = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "r", scopes: ["read"] })).secret;
  owner = await signUp("owner@example.com", "Owner"); // the first account: owner of the default org
  const plans = await import("@/app/api/v1/plans/route");
  const one = await import("@/app/api/v1/plans/[id]/route");
  const runs = await import("@/app/api/v1/runs/route");
  routes = {
    create: plans.POST,
    list: plans.GET,
    get: one.GET,
    put: one.PUT,
    versions: (await import("@/app/api/v1/plans/[id]/versions/route")).GET,
    startRun: runs.POST,
    getRun: (await import("@/app/api/v1/runs/[id]/route")).GET,
  };
});

afterAll(async () => {
  await env?.close();
  delete process.env.VOLLEY_SECRETS_KEY;
});

describe("plans' target credentials", () => {
  let stomp: PlanRecord;
  let mqtt: PlanRecord;

  it("are sealed at rest: no plan, version or YAML row holds them", async () => {
    const a = await call(routes.create, "POST", "/api/v1/plans", { token: tokens.write }, { yaml: stompYaml });
    expect(a.status).toBe(201);
    stomp = (await a.json()) as PlanRecord;
    const b = await call(routes.create, "POST", "/api/v1/plans", { token: tokens.write }, { plan: mqttPlan });
    expect(b.status).toBe(201);
    mqtt = (await b.json()) as PlanRecord;
    const rows = await storedRows();
    for (const s of SECRETS) expect(rows).not.toContain(s);
    expect(rows).toContain(SECRET_MARKER);
    expect(rows).toContain("# the gateway's token"); // the text is kept, only the secret scalars changed
  });

  it("are read back exactly by the owner and by a token that may change plans", async () => {
    for (const creds of [{ cookie: owner }, { token: tokens.write }]) {
      const s = await get(creds, stomp.id);
      expect(s.yaml).toBe(stompYaml);
      expect(s.plan.target.headers?.Authorization).toBe("Bearer hdr-5c1e7a");
      expect(s.plan.target.stomp?.passcode).toBe("stomp-pass-9d4b");
      expect(JSON.stringify(s.plan.flow)).toContain("login-pw-3f8a");
      expect((await get(creds, mqtt.id)).plan.target.mqtt?.password).toBe("mqtt-pw-72c0");
    }
  });

  it("are the redaction marker, in plan and yaml, for a read-scoped token (get, versions, list)", async () => {
    const s = await get({ token: tokens.read }, stomp.id);
    const m = await get({ token: tokens.read }, mqtt.id);
    for (const text of [JSON.stringify(s), JSON.stringify(m)]) for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(s.plan.target.headers?.Authorization).toBe(SECRET_MARKER);
    expect(s.plan.target.stomp).toMatchObject({ login: "guest", passcode: SECRET_MARKER });
    expect(parse(s.yaml!).flow.setup[0].request.json).toEqual({ user: "ann", password: SECRET_MARKER });
    expect(parse(s.yaml!).target.headers.Authorization).toBe(SECRET_MARKER);
    expect(m.plan.target.mqtt).toMatchObject({ username: "u", password: SECRET_MARKER });
    const versions = (await (
      await call(routes.versions, "GET", `/api/v1/plans/${stomp.id}/versions`, { token: tokens.read }, undefined, { id: stomp.id })
    ).json()) as {
      versions: PlanVersion[];
    };
    const list = await (await call(routes.list, "GET", "/api/v1/plans", { token: tokens.read })).text();
    for (const secret of SECRETS) {
      expect(JSON.stringify(versions)).not.toContain(secret);
      expect(list).not.toContain(secret);
    }
  });

  it("keep the stored value when a save sends them back as the marker, and refuse a marker with nothing stored", async () => {
    const redacted = await get({ token: tokens.read }, stomp.id);
    const edited = redacted.yaml!.replace("name: stomp with secrets", "name: renamed");
    const res = await call(routes.put, "PUT", `/api/v1/plans/${stomp.id}`, { token: tokens.write }, { yaml: edited }, { id: stomp.id });
    expect(res.status).toBe(200);
    const back = await get({ cookie: owner }, stomp.id);
    expect(back.version).toBe(redacted.version + 1);
    expect(back.plan.name).toBe("renamed");
    expect(back.plan.target.headers?.Authorization).toBe("Bearer hdr-5c1e7a");
    expect(back.plan.target.stomp?.passcode).toBe("stomp-pass-9d4b");
    expect(parse(back.yaml!).flow.setup[0].request.json.password).toBe("login-pw-3f8a");
    expect(back.yaml).toContain("# the gateway's token");
    const rows = await storedRows();
    for (const s of SECRETS) expect(rows).not.toContain(s);

    const moved = { ...mqttPlan, target: { ...mqttPlan.target, mqtt: { username: "u", password: SECRET_MARKER }, headers: { "X-Api-Key": SECRET_MARKER } } };
    const refused = await call(routes.put, "PUT", `/api/v1/plans/${mqtt.id}`, { token: tokens.write }, { plan: moved }, { id: mqtt.id });
    expect(refused.status).toBe(400);
    const err = await readError(refused);
    expect(err.issues).toEqual([
      expect.objectContaining({ path: "plan.target.headers.X-Api-Key", message: expect.stringMatching(/redaction marker .* type the value itself/) }),
    ]);
    expect((await get({ cookie: owner }, mqtt.id)).plan.target.mqtt?.password).toBe("mqtt-pw-72c0");
  });

  it("a run of the plan stores them sealed; its plan reads redacted for a read token and in full for a writer", async () => {
    await connectTestAgent(env.h.db, DEFAULT_ORG_ID);
    const res = await call(routes.startRun, "POST", "/api/v1/runs", { token: tokens.write }, { planId: stomp.id });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const rows = await storedRows();
    for (const s of SECRETS) expect(rows).not.toContain(s);
    const read = (await (await call(routes.getRun, "GET", `/api/v1/runs/${id}`, { token: tokens.read }, undefined, { id })).json()) as Run;
    expect(read.plan.target.stomp?.passcode).toBe(SECRET_MARKER);
    const full = (await (await call(routes.getRun, "GET", `/api/v1/runs/${id}`, { token: tokens.write }, undefined, { id })).json()) as Run;
    expect(full.plan.target.stomp?.passcode).toBe("stomp-pass-9d4b");
  });

  it("are the marker for a viewer, in plan and yaml", async () => {
    const [user] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, "owner@example.com"));
    await env.h.db.update(schema.members).set({ role: "viewer" }).where(eq(schema.members.userId, user!.id));
    const s = await get({ cookie: owner }, stomp.id);
    expect(s.plan.target.stomp?.passcode).toBe(SECRET_MARKER);
    expect(parse(s.yaml!).target.stomp.passcode).toBe(SECRET_MARKER);
    for (const secret of SECRETS) expect(JSON.stringify(s)).not.toContain(secret);
  });
});
