import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiToken } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, schema } from "@volley/db";
import { eq } from "drizzle-orm";
import type { RouteHandler } from "../http/api-handler";
import { call, readError, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// POST/GET /api/v1/tokens and DELETE /api/v1/tokens/{id}: org admins with a real signed-up session.

let env: ApiTestEnv;
let routes: { create: RouteHandler; list: RouteHandler; revoke: RouteHandler; listRuns: RouteHandler };
let owner = ""; // first account: owner of the default org
let other = ""; // second account: owner of an org of its own

beforeAll(async () => {
  env = await startApiTestEnv();
  const tokens = await import("@/app/api/v1/tokens/route");
  routes = {
    create: tokens.POST,
    list: tokens.GET,
    revoke: (await import("@/app/api/v1/tokens/[id]/route")).DELETE,
    listRuns: (await import("@/app/api/v1/runs/route")).GET,
  };
  owner = await signUp("owner@example.com", "Owner");
  other = await signUp("other@example.com", "Other");
});

afterAll(async () => {
  await env?.close();
});

const create = (creds: { cookie?: string; token?: string }, body: unknown) => call(routes.create, "POST", "/api/v1/tokens", creds, body);

describe("API tokens", () => {
  it("creates a token whose secret is shown once and authenticates API requests in the creator's org", async () => {
    const res = await create({ cookie: owner }, { name: "ci", scopes: ["read"] });
    expect(res.status).toBe(201);
    const { token, secret } = (await res.json()) as { token: ApiToken; secret: string };
    expect(secret).toMatch(/^vly_/);
    expect(secret.startsWith(token.prefix)).toBe(true);
    expect(token).toMatchObject({ name: "ci", scopes: ["read"], lastUsedAt: null, revokedAt: null });
    const [row] = await env.h.db.select().from(schema.apiTokens).where(eq(schema.apiTokens.id, token.id));
    expect(row?.orgId).toBe(DEFAULT_ORG_ID);
    expect(JSON.stringify(row)).not.toContain(secret); // only the hash is stored

    expect((await call(routes.listRuns, "GET", "/api/v1/runs", { token: secret })).status).toBe(200);
    const list = (await (await call(routes.list, "GET", "/api/v1/tokens", { cookie: owner })).json()) as { tokens: (ApiToken & { secret?: string })[] };
    const listed = list.tokens.find((t) => t.id === token.id);
    expect(listed?.lastUsedAt).not.toBeNull();
    expect(listed).not.toHaveProperty("secret");
    expect(JSON.stringify(list)).not.toContain(secret);
  });

  it("defaults the scopes to read and run, and names bad fields", async () => {
    const res = await create({ cookie: owner }, { name: "both" });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { token: ApiToken }).token.scopes).toEqual(["read", "run"]);
    const bad = await create({ cookie: owner }, { name: " ", scopes: [] });
    expect(bad.status).toBe(400);
    const err = await readError(bad);
    expect(err.issues?.map((i) => i.path).sort()).toEqual(["name", "scopes"]);
    expect(err.message).toMatch(/pick at least one scope/);
  });

  it("revokes a token: it stops working at once, and revoking it again is a 404", async () => {
    const { token, secret } = (await (await create({ cookie: owner }, { name: "short-lived" })).json()) as { token: ApiToken; secret: string };
    const res = await call(routes.revoke, "DELETE", `/api/v1/tokens/${token.id}`, { cookie: owner }, undefined, { id: token.id });
    expect(res.status).toBe(204);
    expect((await call(routes.listRuns, "GET", "/api/v1/runs", { token: secret })).status).toBe(401);
    const again = await call(routes.revoke, "DELETE", `/api/v1/tokens/${token.id}`, { cookie: owner }, undefined, { id: token.id });
    expect(again.status).toBe(404);
    const list = (await (await call(routes.list, "GET", "/api/v1/tokens", { cookie: owner })).json()) as { tokens: ApiToken[] };
    expect(list.tokens.find((t) => t.id === token.id)?.revokedAt).not.toBeNull();
  });

  it("keeps tokens to their org: another org neither lists nor revokes them", async () => {
    const { token, secret } = (await (await create({ cookie: owner }, { name: "mine" })).json()) as { token: ApiToken; secret: string };
    const theirs = (await (await call(routes.list, "GET", "/api/v1/tokens", { cookie: other })).json()) as { tokens: ApiToken[] };
    expect(theirs.tokens.map((t) => t.id)).not.toContain(token.id);
    const res = await call(routes.revoke, "DELETE", `/api/v1/tokens/${token.id}`, { cookie: other }, undefined, { id: token.id });
    expect(res.status).toBe(404);
    expect((await call(routes.listRuns, "GET", "/api/v1/runs", { token: secret })).status).toBe(200);
  });

  it("refuses API tokens, anonymous callers and members below admin", async () => {
    const { secret } = await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "full", scopes: ["read", "run"] });
    const byToken = await create({ token: secret }, { name: "minted by a token" });
    expect(byToken.status).toBe(403);
    expect((await readError(byToken)).message).toMatch(/API tokens cannot do this \(org:admin\); sign in/);
    expect((await call(routes.list, "GET", "/api/v1/tokens")).status).toBe(401);

    const [user] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, "other@example.com"));
    await env.h.db.update(schema.members).set({ role: "member" }).where(eq(schema.members.userId, user!.id));
    const asMember = await create({ cookie: other }, { name: "nope" });
    expect(asMember.status).toBe(403);
    expect((await readError(asMember)).message).toMatch(/your role in this org \(member\) cannot do this \(org:admin\); it needs admin/);
    await env.h.db.update(schema.members).set({ role: "admin" }).where(eq(schema.members.userId, user!.id));
    expect((await create({ cookie: other }, { name: "admin may" })).status).toBe(201);
  });
});
