import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "@volley/contracts";
import { createApiToken, insertRun, listMemberships, newId, schema } from "@volley/db";
import { eq } from "drizzle-orm";
import type { RouteHandler } from "../http/api-handler";
import { BASE, call, readError, signUp, startApiTestEnv, type ApiTestEnv, withEnv } from "../test-support/api-test-env";

// Issue 18 item 7: one account may own at most VOLLEY_MAX_ORGS_PER_USER organizations, and in
// hosted mode the quotas hold per owner, summed over every organization they own.

let env: ApiTestEnv;
let authPost: (req: Request) => Promise<Response>;
let createRun: RouteHandler;

beforeAll(async () => {
  env = await startApiTestEnv();
  authPost = (await import("@/app/api/auth/[...all]/route")).POST;
  createRun = (await import("@/app/api/v1/runs/route")).POST;
  await signUp("first-user@example.com"); // takes the default org, so later users get orgs of their own
});

afterAll(async () => {
  await env?.close();
});

/** POST /api/auth/organization/create as a signed-in user (what Settings → Organizations sends). */
async function createOrg(cookie: string, slug: string): Promise<{ status: number; data: { id?: string; message?: string } }> {
  const res = await authPost(
    new Request(`${BASE}/api/auth/organization/create`, {
      method: "POST",
      headers: { cookie, origin: BASE, "content-type": "application/json" },
      body: JSON.stringify({ name: slug, slug }),
    }),
  );
  return { status: res.status, data: (await res.json()) as { id?: string; message?: string } };
}

/** The ids of the organizations the account owns. */
async function ownedOrgs(email: string): Promise<string[]> {
  const [user] = await env.h.db.select().from(schema.users).where(eq(schema.users.email, email));
  return (await listMemberships(env.h.db, user!.id)).filter((m) => m.role === "owner").map((m) => m.orgId);
}

const plan = (count: number): Plan => ({
  name: "quota",
  target: { url: "ws://93.184.215.14/echo", protocol: "ws", connectTimeout: "10s" },
  connections: { count, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 1, per: "connection", arrival: "constant", timeout: "10s" }, duration: "3s", warmup: "1s" },
  thresholds: [],
  agents: { pool: "default", count: 1 },
});

describe("organizations per user", () => {
  it("refuses the n+1th organization an account would own, saying the limit and the setting", async () => {
    const cookie = await signUp("collector@example.com");
    await withEnv({ VOLLEY_MAX_ORGS_PER_USER: "3" }, async () => {
      // The sign-up org is the first of three.
      expect((await createOrg(cookie, "collector-2")).status).toBe(200);
      expect((await createOrg(cookie, "collector-3")).status).toBe(200);
      const refused = await createOrg(cookie, "collector-4");
      expect(refused.status).toBe(403);
      expect(refused.data.message).toMatch(/you already own 3 organizations, the most one account may own \(VOLLEY_MAX_ORGS_PER_USER=3\)/);
    });
  });

  it("holds the limit against parallel creations", async () => {
    const racer = `racer-${newId("usr")}@example.com`; // fresh on a retry
    const cookie = await signUp(racer);
    await withEnv({ VOLLEY_MAX_ORGS_PER_USER: "3" }, async () => {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => createOrg(cookie, `${racer.split("@")[0]}-${i}`)));
      const created = results.filter((r) => r.status === 200).length;
      expect(results.every((r) => r.status === 200 || r.status === 403)).toBe(true);
      // Recounts run one at a time, so the race ends at the limit exactly: never over, and never
      // every creation taken back (unserialised, all eight once saw nine orgs and all eight went).
      expect(1 + created).toBe(3);
      expect(await ownedOrgs(racer)).toHaveLength(3);
    });
  });

  it("allows 10 by default", async () => {
    const cookie = await signUp("ten@example.com");
    for (let i = 2; i <= 10; i++) expect((await createOrg(cookie, `ten-${i}`)).status, `org ${i}`).toBe(200);
    expect((await createOrg(cookie, "ten-11")).status).toBe(403);
  });
});

describe("hosted quotas per owner", () => {
  it("sums queued and running runs over every organization the owner owns, and no one else's", async () => {
    const cookie = await signUp("splitter@example.com");
    const second = (await createOrg(cookie, "splitter-second")).data.id!;
    const [home] = (await ownedOrgs("splitter@example.com")).filter((id) => id !== second);
    const token = (await createApiToken(env.h.db, { orgId: home!, name: "quota", scopes: ["read", "run"] })).secret;
    await signUp("stranger@example.com");
    const [strangers] = await ownedOrgs("stranger@example.com");
    await withEnv({ VOLLEY_MODE: "hosted", AUTH_SECRET: "a-hosted-test-secret-of-32-characters!!", VOLLEY_QUOTA_CONNECTIONS: "100" }, async () => {
      // A stranger's busy org does not count against this owner.
      await insertRun(env.h.db, { plan: plan(90), orgId: strangers! });
      // Alone, 60 connections fit: the run gets past the quota and stops at the target's ownership proof.
      const alone = await call(createRun, "POST", "/api/v1/runs", { token }, { plan: plan(60) });
      expect((await readError(alone)).code).toBe("target_unverified");
      // 60 more already running in the owner's other org: together they are over 100.
      await insertRun(env.h.db, { plan: plan(60), orgId: second });
      const over = await call(createRun, "POST", "/api/v1/runs", { token }, { plan: plan(60) });
      expect(over.status).toBe(403);
      expect(await readError(over)).toMatchObject({
        code: "quota_exceeded",
        message: expect.stringMatching(
          /its owner's quotas .*120 connections with the 1 run already queued or running in the 2 organizations of this organization's owner > 100/,
        ),
      });
    });
  });
});
