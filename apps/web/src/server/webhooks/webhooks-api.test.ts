import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Webhook } from "@volley/contracts";
import { randomBytes } from "node:crypto";
import { createApiToken, DEFAULT_ORG_ID, getActiveWebhook, isSealed, listActiveWebhooks, parseSecretKeys, schema } from "@volley/db";
import { eq } from "drizzle-orm";
import type { RouteHandler } from "../http/api-handler";
import { call, readError, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// POST/GET /api/v1/webhooks and DELETE /api/v1/webhooks/{id}: org admins with a real signed-up session.

let env: ApiTestEnv;
let routes: { create: RouteHandler; list: RouteHandler; remove: RouteHandler };
let owner = ""; // first account: owner of the default org
let other = ""; // second account: owner of an org of its own

// Web seals signing secrets with VOLLEY_SECRETS_KEY; the hub opens them with the same key.
const SECRETS_KEY = randomBytes(32).toString("base64");
const keyBefore = process.env.VOLLEY_SECRETS_KEY;

beforeAll(async () => {
  env = await startApiTestEnv();
  process.env.VOLLEY_SECRETS_KEY = SECRETS_KEY;
  const hooks = await import("@/app/api/v1/webhooks/route");
  routes = { create: hooks.POST, list: hooks.GET, remove: (await import("@/app/api/v1/webhooks/[id]/route")).DELETE };
  owner = await signUp("hook-owner@example.com", "Owner");
  other = await signUp("hook-other@example.com", "Other");
});

afterAll(async () => {
  if (keyBefore === undefined) delete process.env.VOLLEY_SECRETS_KEY;
  else process.env.VOLLEY_SECRETS_KEY = keyBefore;
  await env?.close();
});

type Created = { webhook: Webhook; secret: string };
const create = (creds: { cookie?: string; token?: string }, body: unknown) => call(routes.create, "POST", "/api/v1/webhooks", creds, body);
const list = async (cookie: string) =>
  ((await (await call(routes.list, "GET", "/api/v1/webhooks", { cookie })).json()) as { webhooks: (Webhook & { secret?: string })[] }).webhooks;
const remove = (cookie: string, id: string) => call(routes.remove, "DELETE", `/api/v1/webhooks/${id}`, { cookie }, undefined, { id });

describe("webhooks API", () => {
  it("creates a webhook whose signing secret is shown once, never listed, and is what the hub signs with", async () => {
    const res = await create({ cookie: owner }, { url: "https://ci.example.com/volley" });
    expect(res.status).toBe(201);
    const { webhook, secret } = (await res.json()) as Created;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect(webhook).toMatchObject({ url: "https://ci.example.com/volley", events: ["run.finished"], disabledAt: null });
    expect(webhook.id).toMatch(/^whk_/);
    const listed = await list(owner);
    expect(listed.find((w) => w.id === webhook.id)).toEqual(webhook);
    expect(JSON.stringify(listed)).not.toContain(secret);
    // Stored sealed, not as the secret itself; opened with the shared key it is what the hub signs with.
    const [stored] = (await listActiveWebhooks(env.h.db, DEFAULT_ORG_ID, "run.finished")).filter((w) => w.id === webhook.id);
    expect(isSealed(stored!.secret)).toBe(true);
    expect(stored!.secret).not.toContain(secret.slice("whsec_".length));
    expect((await getActiveWebhook(env.h.db, webhook.id, parseSecretKeys(SECRETS_KEY)))?.secret).toBe(secret);
  });

  it("names bad fields with the fix", async () => {
    const bad = await create({ cookie: owner }, { url: "ftp://example.com/x", events: [] });
    expect(bad.status).toBe(400);
    const err = await readError(bad);
    expect(err.issues?.map((i) => i.path).sort()).toEqual(["events", "url"]);
    expect(err.message).toMatch(/http:\/\/ or https:\/\/ URL/);
    expect(err.message).toMatch(/pick at least one event/);
    const unknown = await readError(await create({ cookie: owner }, { url: "http://127.0.0.1:9/x", events: ["run.started"] }));
    expect(unknown.message).toMatch(/events\.0: use "run.finished"/);
  });

  it("deletes a webhook: it is no longer delivered to, and deleting it again is a 404", async () => {
    const { webhook } = (await (await create({ cookie: owner }, { url: "http://127.0.0.1:9/gone" })).json()) as Created;
    expect((await remove(owner, webhook.id)).status).toBe(204);
    expect((await listActiveWebhooks(env.h.db, DEFAULT_ORG_ID, "run.finished")).map((w) => w.id)).not.toContain(webhook.id);
    expect((await list(owner)).find((w) => w.id === webhook.id)?.disabledAt).not.toBeNull();
    const again = await remove(owner, webhook.id);
    expect(again.status).toBe(404);
    expect((await readError(again)).message).toBe(`webhook ${webhook.id} does not exist`);
  });

  it("keeps webhooks to their org: another org neither lists nor deletes them", async () => {
    const { webhook } = (await (await create({ cookie: owner }, { url: "http://127.0.0.1:9/mine" })).json()) as Created;
    expect((await list(other)).map((w) => w.id)).not.toContain(webhook.id);
    expect((await remove(other, webhook.id)).status).toBe(404);
    expect((await listActiveWebhooks(env.h.db, DEFAULT_ORG_ID, "run.finished")).map((w) => w.id)).toContain(webhook.id);
  });

  it("refuses API tokens, anonymous callers and members below admin", async () => {
    const { secret } = await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "full", scopes: ["read", "run"] });
    const byToken = await create({ token: secret }, { url: "http://127.0.0.1:9/x" });
    expect(byToken.status).toBe(403);
    expect((await readError(byToken)).message).toMatch(/API tokens cannot do this \(org:admin\); sign in/);
    expect((await call(routes.list, "GET", "/api/v1/webhooks")).status).toBe(401);
    const [user] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, "hook-other@example.com"));
    await env.h.db.update(schema.members).set({ role: "member" }).where(eq(schema.members.userId, user!.id));
    const asMember = await create({ cookie: other }, { url: "http://127.0.0.1:9/x" });
    expect(asMember.status).toBe(403);
    expect((await readError(asMember)).message).toMatch(/your role in this org \(member\) cannot do this \(org:admin\); it needs admin/);
  });

  it("hosted mode: refuses a receiver on a private or loopback address, naming the field", async () => {
    const before = process.env.VOLLEY_MODE;
    // AUTH_SECRET (startApiTestEnv's) stays as it is, so the owner's session cookie stays valid.
    process.env.VOLLEY_MODE = "hosted";
    try {
      for (const url of ["http://127.0.0.1:9/hook", "http://10.0.0.8/hook", "http://localhost/hook"]) {
        const res = await create({ cookie: owner }, { url });
        expect(res.status, url).toBe(403);
        const err = await readError(res);
        expect(err.code).toBe("target_refused");
        expect(err.issues?.[0]?.path).toBe("url");
      }
    } finally {
      if (before === undefined) delete process.env.VOLLEY_MODE;
      else process.env.VOLLEY_MODE = before;
    }
  });
});
