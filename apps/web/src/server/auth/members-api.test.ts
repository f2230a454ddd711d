import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "@volley/contracts";
import { DEFAULT_ORG_ID, getMembership, insertRun } from "@volley/db";
import type { RouteHandler } from "../http/api-handler";
import { BASE, call, readError, request, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// Members and invitations through better-auth's organization endpoints (the Settings → Members page
// calls these), and what the joined role then allows on our own API. Real sign-ups, real sessions.

let env: ApiTestEnv;
let authRoute: { GET: (req: Request) => Promise<Response>; POST: (req: Request) => Promise<Response> };
let runs: { list: RouteHandler; create: RouteHandler };
let sessionUser: typeof import("./auth").sessionUser;
const cookies = { owner: "", viewer: "", member: "", stranger: "" };
const users: Record<keyof typeof cookies, string> = {
  owner: "owner@example.com",
  viewer: "viewer@example.com",
  member: "member@example.com",
  stranger: "stranger@example.com",
};

const plan: Plan = {
  name: "members test",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws", connectTimeout: "10s" },
  connections: { count: 1, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 5, per: "connection", arrival: "constant", timeout: "10s" }, duration: "3s", warmup: "1s" },
  thresholds: [],
  agents: { pool: "default", count: 1 },
};

beforeAll(async () => {
  env = await startApiTestEnv();
  authRoute = await import("@/app/api/auth/[...all]/route");
  const r = await import("@/app/api/v1/runs/route");
  runs = { list: r.GET, create: r.POST };
  ({ sessionUser } = await import("./auth"));
  // The first account owns the default org; the others get orgs of their own until they join.
  for (const who of Object.keys(cookies) as (keyof typeof cookies)[]) cookies[who] = await signUp(users[who], who);
  await insertRun(env.h.db, { orgId: DEFAULT_ORG_ID, plan });
});

afterAll(async () => {
  await env?.close();
});

/** A call to better-auth's /api/auth/organization/<endpoint> as a signed-in user. */
// biome-ignore lint/suspicious/noExplicitAny: better-auth's answers differ per endpoint; each test reads the fields it checks.
async function org(cookie: string, method: "GET" | "POST", endpoint: string, body?: Record<string, unknown>): Promise<{ status: number; data: any }> {
  const url = new URL(`${BASE}/api/auth/organization/${endpoint}`);
  if (method === "GET") for (const [k, v] of Object.entries(body ?? {})) url.searchParams.set(k, String(v));
  const req = new Request(url, {
    method,
    headers: { cookie, origin: BASE, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
    body: method === "POST" ? JSON.stringify(body ?? {}) : undefined,
  });
  const res = await authRoute[method](req);
  const text = await res.text();
  return { status: res.status, data: text ? JSON.parse(text) : null };
}

const invite = (cookie: string, email: string, role: string) => org(cookie, "POST", "invite-member", { email, role, organizationId: DEFAULT_ORG_ID });

/** Invites `who` to the default org as `role` and has them accept; returns the invitation. */
async function join(who: keyof typeof cookies, role: string) {
  const invited = await invite(cookies.owner, users[who], role);
  expect(invited.status, JSON.stringify(invited.data)).toBe(200);
  const accepted = await org(cookies[who], "POST", "accept-invitation", { invitationId: invited.data.id });
  expect(accepted.status, JSON.stringify(accepted.data)).toBe(200);
  return invited.data as { id: string; role: string };
}

describe("invitations", () => {
  it("an owner invites a user as viewer; once accepted they read the org's runs and cannot start one", async () => {
    const invited = await invite(cookies.owner, users.viewer, "viewer");
    expect(invited.status, JSON.stringify(invited.data)).toBe(200);
    expect(invited.data).toMatchObject({ email: users.viewer, role: "viewer", organizationId: DEFAULT_ORG_ID, status: "pending" });
    // The invitation id is the link's secret: it must not be guessable.
    expect(invited.data.id).toMatch(/^inv_[a-z0-9]{16}$/);

    const pending = await org(cookies.owner, "GET", "list-invitations", { organizationId: DEFAULT_ORG_ID });
    expect(pending.status).toBe(200);
    expect(pending.data.map((i: { id: string }) => i.id)).toContain(invited.data.id);

    // Only the invited address can use the link.
    const wrongUser = await org(cookies.stranger, "POST", "accept-invitation", { invitationId: invited.data.id });
    expect(wrongUser.status).toBe(403);

    const seen = await org(cookies.viewer, "GET", "get-invitation", { id: invited.data.id });
    expect(seen.status, JSON.stringify(seen.data)).toBe(200);
    expect(seen.data).toMatchObject({ organizationId: DEFAULT_ORG_ID, role: "viewer", inviterEmail: users.owner });
    const accepted = await org(cookies.viewer, "POST", "accept-invitation", { invitationId: invited.data.id });
    expect(accepted.status, JSON.stringify(accepted.data)).toBe(200);

    expect((await getMembership(env.h.db, (await sessionOf(cookies.viewer)).userId, DEFAULT_ORG_ID))?.role).toBe("viewer");
    // Accepting switches the session to the joined org.
    expect(await sessionOf(cookies.viewer)).toMatchObject({ orgId: DEFAULT_ORG_ID, role: "viewer" });
    const list = await call(runs.list, "GET", "/api/v1/runs", { cookie: cookies.viewer });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { runs: { name: string }[] }).runs.map((r) => r.name)).toContain(plan.name);
    const create = await call(runs.create, "POST", "/api/v1/runs", { cookie: cookies.viewer }, { plan });
    expect(create.status).toBe(403);
    expect((await readError(create)).message).toMatch(/\(viewer\) cannot do this \(runs:write\)/);

    // A used link is spent.
    expect((await org(cookies.viewer, "POST", "accept-invitation", { invitationId: invited.data.id })).status).toBe(400);
  });

  it("refuses to invite from a member (403) or a viewer (403), and refuses a role we do not have (400)", async () => {
    await join("member", "member");
    const byMember = await invite(cookies.member, "someone@example.com", "viewer");
    expect(byMember.status).toBe(403);
    expect(byMember.data.message).toMatch(/not allowed to invite/i);
    expect((await invite(cookies.viewer, "someone@example.com", "viewer")).status).toBe(403);
    const unknownRole = await invite(cookies.owner, "someone@example.com", "superuser");
    expect(unknownRole.status).toBe(400);
    expect(unknownRole.data.message).toMatch(/superuser/);
  });

  it("lets an owner cancel an invitation, after which the link no longer works", async () => {
    const invited = await invite(cookies.owner, "later@example.com", "member");
    expect(invited.status).toBe(200);
    expect((await org(cookies.owner, "POST", "cancel-invitation", { invitationId: invited.data.id })).status).toBe(200);
    const pending = await org(cookies.owner, "GET", "list-invitations", { organizationId: DEFAULT_ORG_ID });
    expect(pending.data.find((i: { id: string }) => i.id === invited.data.id)?.status).toBe("canceled");
    const later = await signUp("later@example.com", "Later");
    expect((await org(later, "POST", "accept-invitation", { invitationId: invited.data.id })).status).toBe(400);
  });
});

describe("members", () => {
  it("lists the org's members with their roles", async () => {
    const res = await org(cookies.owner, "GET", "list-members", { organizationId: DEFAULT_ORG_ID });
    expect(res.status).toBe(200);
    const roles = Object.fromEntries(res.data.members.map((m: { role: string; user: { email: string } }) => [m.user.email, m.role]));
    expect(roles).toMatchObject({ [users.owner]: "owner", [users.viewer]: "viewer", [users.member]: "member" });
  });

  it("an owner changes a member's role, and the new role applies to the next request", async () => {
    const memberId = await memberIdOf(users.viewer);
    const changed = await org(cookies.owner, "POST", "update-member-role", { memberId, role: "member", organizationId: DEFAULT_ORG_ID });
    expect(changed.status, JSON.stringify(changed.data)).toBe(200);
    expect(await sessionOf(cookies.viewer)).toMatchObject({ orgId: DEFAULT_ORG_ID, role: "member" });
    // A member cannot change roles, and nobody but an owner makes an owner.
    expect((await org(cookies.member, "POST", "update-member-role", { memberId, role: "admin", organizationId: DEFAULT_ORG_ID })).status).toBe(403);
    expect((await org(cookies.owner, "POST", "update-member-role", { memberId, role: "viewer", organizationId: DEFAULT_ORG_ID })).status).toBe(200);
    expect(await sessionOf(cookies.viewer)).toMatchObject({ role: "viewer" });
  });

  it("an owner removes a member: they lose access to the org at once", async () => {
    const memberId = await memberIdOf(users.member);
    const denied = await org(cookies.viewer, "POST", "remove-member", { memberIdOrEmail: memberId, organizationId: DEFAULT_ORG_ID });
    expect(denied.status).toBeGreaterThanOrEqual(400);
    const removed = await org(cookies.owner, "POST", "remove-member", { memberIdOrEmail: memberId, organizationId: DEFAULT_ORG_ID });
    expect(removed.status, JSON.stringify(removed.data)).toBe(200);
    // Their session falls back to the org they own, which holds none of the default org's runs.
    const after = await sessionOf(cookies.member);
    expect(after.orgId).not.toBe(DEFAULT_ORG_ID);
    expect(after.role).toBe("owner");
  });
});

async function memberIdOf(email: string): Promise<string> {
  const res = await org(cookies.owner, "GET", "list-members", { organizationId: DEFAULT_ORG_ID });
  const found = res.data.members.find((m: { user: { email: string } }) => m.user.email === email);
  if (!found) throw new Error(`${email} is not a member of the default org`);
  return found.id as string;
}

async function sessionOf(cookie: string): Promise<{ orgId: string; userId: string; role: string }> {
  const auth = await sessionUser(request("GET", "/", { cookie }));
  if (auth?.actor.kind !== "user") throw new Error("no signed-in user for this cookie");
  return { orgId: auth.orgId, userId: auth.actor.userId, role: auth.actor.role };
}
