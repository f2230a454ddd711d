import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentListItem, AgentToken, Plan } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, insertRun, insertShards, schema, setAgentStatus, updateShard, upsertAgent, verifyAgentToken } from "@volley/db";
import { eq } from "drizzle-orm";
import { MisconfiguredError } from "@/env";
import type { RouteHandler } from "../http/api-handler";
import { agentEndpoints } from "./agents";
import { BASE, call, readError, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// GET /api/v1/agents, DELETE /api/v1/agents/{id}, POST/GET /api/v1/agent-tokens, DELETE /api/v1/agent-tokens/{id} and
// GET /install-agent.sh, with real signed-up sessions and real agent rows written the way hubs write them.

let env: ApiTestEnv;
let routes: { agents: RouteHandler; remove: RouteHandler; create: RouteHandler; list: RouteHandler; revoke: RouteHandler; installer: RouteHandler };
let owner = ""; // first account: owner of the default org
let other = ""; // second account: owner of an org of its own
let otherOrg = "";

const hello = (name: string, instanceId: string, pool = "default") => ({
  token: "unused",
  instanceId,
  name,
  version: "0.1.0",
  pool,
  labels: { region: "eu" },
  capacity: { cores: 4, memoryMb: 8192, maxConnections: 50_000, sourceAddresses: ["127.0.0.2"] },
});

beforeAll(async () => {
  env = await startApiTestEnv();
  const tokens = await import("@/app/api/v1/agent-tokens/route");
  routes = {
    agents: (await import("@/app/api/v1/agents/route")).GET,
    remove: (await import("@/app/api/v1/agents/[id]/route")).DELETE,
    create: tokens.POST,
    list: tokens.GET,
    revoke: (await import("@/app/api/v1/agent-tokens/[id]/route")).DELETE,
    installer: (await import("@/app/install-agent.sh/route")).GET,
  };
  owner = await signUp("owner@example.com", "Owner");
  other = await signUp("other@example.com", "Other");
  const [user] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, "other@example.com"));
  const [membership] = await env.h.db.select().from(schema.members).where(eq(schema.members.userId, user!.id));
  otherOrg = membership!.organizationId;
  expect(otherOrg).not.toBe(DEFAULT_ORG_ID);
});

afterAll(async () => {
  await env?.close();
});

const create = (creds: { cookie?: string; token?: string }, body: unknown) => call(routes.create, "POST", "/api/v1/agent-tokens", creds, body);
const listAgents = async (creds: { cookie?: string; token?: string }) => {
  const res = await call(routes.agents, "GET", "/api/v1/agents", creds);
  expect(res.status).toBe(200);
  return ((await res.json()) as { agents: AgentListItem[] }).agents;
};

describe("GET /api/v1/agents", () => {
  it("lists the org's agents with status and capacity; a stale heartbeat reads offline; other orgs see none of them", async () => {
    const db = env.h.db;
    await upsertAgent(db, hello("a-online", "inst-a1"));
    const busy = await upsertAgent(db, hello("a-busy", "inst-a2", "eu"));
    await setAgentStatus(db, busy.id, "busy");
    const stale = await upsertAgent(db, hello("a-stale", "inst-a3"));
    // A hub that died leaves its agents' rows "online"; the last heartbeat two minutes ago gives it away.
    await db
      .update(schema.agents)
      .set({ lastSeenAt: new Date(Date.now() - 120_000) })
      .where(eq(schema.agents.id, stale.id));
    const gone = await upsertAgent(db, hello("a-gone", "inst-a4"));
    await setAgentStatus(db, gone.id, "offline");
    await upsertAgent(db, hello("b-online", "inst-b1"), { orgId: otherOrg });

    const mine = await listAgents({ cookie: owner });
    expect(mine.map((a) => [a.name, a.status])).toEqual([
      ["a-busy", "busy"],
      ["a-gone", "offline"],
      ["a-online", "online"],
      ["a-stale", "offline"],
    ]);
    expect(mine.find((a) => a.name === "a-busy")).toMatchObject({
      pool: "eu",
      version: "0.1.0",
      labels: { region: "eu" },
      capacity: { cores: 4, memoryMb: 8192, maxConnections: 50_000, sourceAddresses: ["127.0.0.2"] },
      tokenId: null,
    });
    expect(Date.parse(mine.find((a) => a.name === "a-stale")?.lastSeenAt ?? "")).toBeLessThan(Date.now() - 60_000);

    const theirs = await listAgents({ cookie: other });
    expect(theirs.map((a) => [a.name, a.status])).toEqual([["b-online", "online"]]);
  });

  it("answers API tokens with the read scope, refuses run-only tokens and anonymous callers", async () => {
    const { secret: read } = await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "reader", scopes: ["read"] });
    expect((await listAgents({ token: read })).map((a) => a.name)).toContain("a-online");
    const { secret: runOnly } = await createApiToken(env.h.db, { orgId: otherOrg, name: "runner", scopes: ["run"] });
    const refused = await call(routes.agents, "GET", "/api/v1/agents", { token: runOnly });
    expect(refused.status).toBe(403);
    expect((await readError(refused)).message).toMatch(/lacks the "read" scope \(runs:read\)/);
    expect((await call(routes.agents, "GET", "/api/v1/agents")).status).toBe(401);
  });
});

describe("DELETE /api/v1/agents/{id}", () => {
  const plan = {
    name: "busy",
    target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws", connectTimeout: "10s" },
    connections: { count: 1, rate: 10 },
    scenario: { kind: "echo", message: { bytes: 64, rate: 5, per: "connection", arrival: "constant", timeout: "10s" }, duration: "3s", warmup: "1s" },
    thresholds: [],
    agents: { pool: "default", count: 1 },
  } as unknown as Plan;
  const remove = (id: string, creds: { cookie?: string; token?: string } = { cookie: owner }) =>
    call(routes.remove, "DELETE", `/api/v1/agents/${id}`, creds, undefined, { id });
  const keyed = (name: string, instanceId: string) => ({ ...hello(name, instanceId), agentKey: `key-${name}` });

  it("removes an offline agent: gone from the list, and the same agent connecting again enrolls as a new one", async () => {
    const row = await upsertAgent(env.h.db, keyed("rm-gone", "rm-gone-1"));
    await setAgentStatus(env.h.db, row.id, "offline");
    const res = await remove(row.id);
    expect(res.status).toBe(204);
    expect((await listAgents({ cookie: owner })).some((a) => a.id === row.id)).toBe(false);
    // What the hub does when that agent (same persisted id) reconnects with its token.
    const back = await upsertAgent(env.h.db, keyed("rm-gone", "rm-gone-2"));
    expect(back.id).not.toBe(row.id);
    expect((await listAgents({ cookie: owner })).filter((a) => a.name === "rm-gone").map((a) => [a.id, a.status])).toEqual([[back.id, "online"]]);
  });

  it("is a 404 for an unknown agent and for another org's agent (which stays)", async () => {
    const missing = await remove("agt_nope");
    expect(missing.status).toBe(404);
    expect((await readError(missing)).message).toBe("agent agt_nope does not exist");
    const theirs = await upsertAgent(env.h.db, hello("b-offline", "rm-b-1"), { orgId: otherOrg });
    await setAgentStatus(env.h.db, theirs.id, "offline");
    expect((await remove(theirs.id)).status).toBe(404);
    expect((await listAgents({ cookie: other })).some((a) => a.id === theirs.id)).toBe(true);
    // Its own org's owner may.
    expect((await remove(theirs.id, { cookie: other })).status).toBe(204);
  });

  it("refuses (409) an agent busy with a shard, naming the run, and one still connected", async () => {
    const busy = await upsertAgent(env.h.db, hello("rm-busy", "rm-busy-1"));
    const run = await insertRun(env.h.db, { plan });
    const [shard] = await insertShards(env.h.db, run.id, [plan]);
    await updateShard(env.h.db, shard!.id, { agentId: busy.id, status: "assigned" });
    await updateShard(env.h.db, shard!.id, { status: "running" });
    await setAgentStatus(env.h.db, busy.id, "busy");
    const refused = await remove(busy.id);
    expect(refused.status).toBe(409);
    expect(await readError(refused)).toMatchObject({
      code: "conflict",
      message: `agent ${busy.id} is busy with a shard of run ${run.id}; wait for the run to end (or abort it), then remove the agent`,
    });
    await updateShard(env.h.db, shard!.id, { status: "completed" });
    await setAgentStatus(env.h.db, busy.id, "online");
    const connected = await remove(busy.id);
    expect(connected.status).toBe(409);
    expect((await readError(connected)).message).toMatch(/^agent agt_\S+ is connected; stop the agent process \(or revoke its join token\) first/);
    expect((await listAgents({ cookie: owner })).some((a) => a.id === busy.id)).toBe(true);
    await setAgentStatus(env.h.db, busy.id, "offline");
    expect((await remove(busy.id)).status).toBe(204);
  });

  it("needs an org admin's session: API tokens, viewers, members and anonymous callers are refused", async () => {
    const row = await upsertAgent(env.h.db, hello("rm-guarded", "rm-guarded-1"), { orgId: otherOrg });
    await setAgentStatus(env.h.db, row.id, "offline");
    const { secret } = await createApiToken(env.h.db, { orgId: otherOrg, name: "full", scopes: ["read", "run"] });
    const byToken = await remove(row.id, { token: secret });
    expect(byToken.status).toBe(403);
    expect((await readError(byToken)).message).toMatch(/API tokens cannot do this \(org:admin\)/);
    expect((await remove(row.id, {})).status).toBe(401);
    const [user] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, "other@example.com"));
    try {
      for (const role of ["viewer", "member"] as const) {
        await env.h.db.update(schema.members).set({ role }).where(eq(schema.members.userId, user!.id));
        const refused = await remove(row.id, { cookie: other });
        expect(refused.status).toBe(403);
        expect((await readError(refused)).message).toMatch(new RegExp(`your role in this org \\(${role}\\) cannot do this \\(org:admin\\); it needs admin`));
      }
      await env.h.db.update(schema.members).set({ role: "admin" }).where(eq(schema.members.userId, user!.id));
      expect((await remove(row.id, { cookie: other })).status).toBe(204);
    } finally {
      await env.h.db.update(schema.members).set({ role: "owner" }).where(eq(schema.members.userId, user!.id));
    }
  });
});

describe("agent join tokens", () => {
  it("creates a join token whose secret is shown once, into the pool asked for, and the hub accepts it", async () => {
    const res = await create({ cookie: owner }, { name: "eu loadgen", pool: "eu-west" });
    expect(res.status).toBe(201);
    const { token, secret } = (await res.json()) as { token: AgentToken; secret: string };
    expect(secret).toMatch(/^vat_/);
    expect(secret.startsWith(token.prefix)).toBe(true);
    expect(token).toMatchObject({ name: "eu loadgen", pool: "eu-west", lastUsedAt: null, revokedAt: null });
    const [row] = await env.h.db.select().from(schema.agentTokens).where(eq(schema.agentTokens.id, token.id));
    expect(row?.orgId).toBe(DEFAULT_ORG_ID);
    expect(JSON.stringify(row)).not.toContain(secret);
    // What the hub's admission does with the secret an agent presents.
    expect(await verifyAgentToken(env.h.db, secret)).toMatchObject({ status: "live", token: { id: token.id, orgId: DEFAULT_ORG_ID, pool: "eu-west" } });

    const list = await call(routes.list, "GET", "/api/v1/agent-tokens", { cookie: owner });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { tokens: AgentToken[] };
    expect(body.tokens.find((t) => t.id === token.id)?.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(body)).not.toContain(secret);
    expect(JSON.stringify(body)).not.toContain("tokenHash");
  });

  it("defaults the pool and names bad fields", async () => {
    const res = await create({ cookie: owner }, { name: "plain" });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { token: AgentToken }).token.pool).toBe("default");
    const bad = await create({ cookie: owner }, { name: " ", pool: "EU West" });
    expect(bad.status).toBe(400);
    const err = await readError(bad);
    expect(err.issues?.map((i) => i.path).sort()).toEqual(["name", "pool"]);
    expect(err.message).toMatch(/lowercase letters, digits and dashes/);
  });

  it("revokes a join token: the hub refuses it from then on, and revoking again is a 404", async () => {
    const { token, secret } = (await (await create({ cookie: owner }, { name: "short-lived" })).json()) as { token: AgentToken; secret: string };
    const res = await call(routes.revoke, "DELETE", `/api/v1/agent-tokens/${token.id}`, { cookie: owner }, undefined, { id: token.id });
    expect(res.status).toBe(204);
    expect((await verifyAgentToken(env.h.db, secret)).status).toBe("revoked");
    const again = await call(routes.revoke, "DELETE", `/api/v1/agent-tokens/${token.id}`, { cookie: owner }, undefined, { id: token.id });
    expect(again.status).toBe(404);
    expect((await readError(again)).message).toMatch(/agent join token .* does not exist/);
    const list = (await (await call(routes.list, "GET", "/api/v1/agent-tokens", { cookie: owner })).json()) as { tokens: AgentToken[] };
    expect(list.tokens.find((t) => t.id === token.id)?.revokedAt).not.toBeNull();
  });

  it("keeps join tokens to their org: another org neither lists nor revokes them", async () => {
    const { token, secret } = (await (await create({ cookie: owner }, { name: "mine" })).json()) as { token: AgentToken; secret: string };
    const theirs = (await (await call(routes.list, "GET", "/api/v1/agent-tokens", { cookie: other })).json()) as { tokens: AgentToken[] };
    expect(theirs.tokens).toEqual([]);
    const res = await call(routes.revoke, "DELETE", `/api/v1/agent-tokens/${token.id}`, { cookie: other }, undefined, { id: token.id });
    expect(res.status).toBe(404);
    expect((await verifyAgentToken(env.h.db, secret)).status).toBe("live");
  });

  it("refuses API tokens, anonymous callers and members below admin", async () => {
    const { secret } = await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "full", scopes: ["read", "run"] });
    const byToken = await create({ token: secret }, { name: "minted by a token" });
    expect(byToken.status).toBe(403);
    expect((await readError(byToken)).message).toMatch(/API tokens cannot do this \(org:admin\); sign in/);
    expect((await call(routes.list, "GET", "/api/v1/agent-tokens", { token: secret })).status).toBe(403);
    expect((await call(routes.list, "GET", "/api/v1/agent-tokens")).status).toBe(401);

    const [user] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, "other@example.com"));
    await env.h.db.update(schema.members).set({ role: "viewer" }).where(eq(schema.members.userId, user!.id));
    try {
      const asViewer = await create({ cookie: other }, { name: "nope" });
      expect(asViewer.status).toBe(403);
      expect((await readError(asViewer)).message).toMatch(/your role in this org \(viewer\) cannot do this \(org:admin\); it needs admin/);
      // Viewers still see the agents.
      expect((await listAgents({ cookie: other })).map((a) => a.name)).toEqual(["b-online"]);
      await env.h.db.update(schema.members).set({ role: "admin" }).where(eq(schema.members.userId, user!.id));
      expect((await create({ cookie: other }, { name: "admin may" })).status).toBe(201);
    } finally {
      await env.h.db.update(schema.members).set({ role: "owner" }).where(eq(schema.members.userId, user!.id));
    }
  });
});

describe("install commands", () => {
  it("serves infra/agent/install.sh at /install-agent.sh without credentials", async () => {
    const res = await call(routes.installer, "GET", "/install-agent.sh");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/shellscript/);
    const script = await res.text();
    expect(script).toBe(await readFile(new URL("../../../../../infra/agent/install.sh", import.meta.url), "utf8"));
    expect(script).toMatch(/--token <token>/);
  });

  it("points agents at VOLLEY_HUB_PUBLIC_URL, else at web's own /hub relay on the origin the browser used, and says when that is loopback-only", () => {
    const saved = { hub: process.env.VOLLEY_HUB_PUBLIC_URL, web: process.env.VOLLEY_PUBLIC_URL };
    try {
      delete process.env.VOLLEY_HUB_PUBLIC_URL;
      delete process.env.VOLLEY_PUBLIC_URL;
      const ends = (headers: Record<string, string>) => {
        const { otherAddresses, ...rest } = agentEndpoints(new Headers(headers));
        expect(otherAddresses.every((a) => /^http:\/\/\S+:\d+$/.test(a) && !/127\.0\.0\.1|\[::1\]/.test(a))).toBe(true);
        return rest;
      };
      expect(ends({ host: "loadbox.lan:3000" })).toEqual({ webOrigin: "http://loadbox.lan:3000", hubUrl: "http://loadbox.lan:3000/hub", loopbackOnly: false });
      expect(ends({ host: "internal:3000", "x-forwarded-host": "volley.example.com", "x-forwarded-proto": "https" })).toEqual({
        webOrigin: "https://volley.example.com",
        hubUrl: "https://volley.example.com/hub",
        loopbackOnly: false,
      });
      for (const host of ["localhost:3000", "127.0.0.1:3000", "[::1]:3000", "app.localhost:3000"]) expect(ends({ host }).loopbackOnly, host).toBe(true);
      expect(ends({ host: "10.0.0.5:3000" })).toEqual({ webOrigin: "http://10.0.0.5:3000", hubUrl: "http://10.0.0.5:3000/hub", loopbackOnly: false });
      process.env.VOLLEY_HUB_PUBLIC_URL = "https://hub.example.com/";
      process.env.VOLLEY_PUBLIC_URL = BASE;
      expect(ends({ host: "localhost:3000" })).toMatchObject({ webOrigin: BASE, hubUrl: "https://hub.example.com" });
      process.env.VOLLEY_HUB_PUBLIC_URL = "hub.example.com:3001";
      expect(() => agentEndpoints(new Headers())).toThrow(MisconfiguredError);
      expect(() => agentEndpoints(new Headers())).toThrow(/VOLLEY_HUB_PUBLIC_URL \("hub.example.com:3001"\) must be the http\(s\) URL/);
    } finally {
      for (const [name, value] of [
        ["VOLLEY_HUB_PUBLIC_URL", saved.hub],
        ["VOLLEY_PUBLIC_URL", saved.web],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
