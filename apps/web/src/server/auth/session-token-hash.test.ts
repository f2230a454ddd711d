import { createHash, createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId, schema } from "@volley/db";
import { eq } from "drizzle-orm";
import type { RouteHandler } from "../http/api-handler";
import { BASE, call, signUp, startApiTestEnv, TEST_PASSWORD, type ApiTestEnv } from "../test-support/api-test-env";

// Session tokens hashed at rest: the sessions table never holds a value that, signed with the real
// AUTH_SECRET, opens a session; sign-in, sign-out and org switching work as before.

const SECRET = "session-token-hash-test-secret-0123456789abcdef";
const COOKIE = "better-auth.session_token";

let env: ApiTestEnv;
let listRuns: RouteHandler;
let authRoute: { GET: (req: Request) => Promise<Response>; POST: (req: Request) => Promise<Response> };

/** What better-auth (better-call's signCookieValue) sends: `token.base64(HMAC-SHA256(secret, token))`, URI-encoded. */
const signedCookie = (value: string) => `${COOKIE}=${encodeURIComponent(`${value}.${createHmac("sha256", SECRET).update(value).digest("base64")}`)}`;
const tokenOf = (cookie: string) => decodeURIComponent(cookie.split("=")[1]!).split(".")[0]!;
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

async function auth(path: string, cookie: string | null, body: unknown = {}): Promise<Response> {
  return authRoute.POST(
    new Request(`${BASE}/api/auth/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: BASE, ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    }),
  );
}

const sessionCookie = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith(`${COOKIE}=`) && c.length > COOKIE.length + 1) ?? "";

const runsStatus = async (cookie: string) => (await call(listRuns, "GET", "/api/v1/runs", { cookie })).status;
const storedTokens = async () => (await env.h.db.select({ token: schema.sessions.token }).from(schema.sessions)).map((r) => r.token);

beforeAll(async () => {
  process.env.AUTH_SECRET = SECRET;
  env = await startApiTestEnv();
  listRuns = (await import("@/app/api/v1/runs/route")).GET;
  authRoute = await import("@/app/api/auth/[...all]/route");
});

afterAll(async () => {
  await env?.close();
  delete process.env.AUTH_SECRET;
});

describe("session tokens at rest", () => {
  it("stores only the SHA-256 of the cookie's token, and refuses a cookie minted from the stored value", async () => {
    const cookie = await signUp(`hash-${newId("usr")}@example.com`);
    const token = tokenOf(cookie);
    const stored = await storedTokens();
    expect(stored).not.toContain(token);
    expect(stored).toContain(sha256(token));
    // The minting is right: the same signing over the real token is the real cookie, and it works.
    expect(signedCookie(token)).toBe(cookie);
    expect(await runsStatus(cookie)).toBe(200);
    for (const value of stored) expect(await runsStatus(signedCookie(value))).toBe(401);
  });

  it("signs in to a new hashed session, switches org on it, and signing out deletes its row", async () => {
    const email = `signin-${newId("usr")}@example.com`;
    const first = await signUp(email);
    const signIn = await auth("sign-in/email", null, { email, password: TEST_PASSWORD });
    expect(signIn.status).toBe(200);
    const cookie = sessionCookie(signIn);
    const token = tokenOf(cookie);
    expect(token).not.toBe(tokenOf(first));
    const [row] = await env.h.db
      .select()
      .from(schema.sessions)
      .where(eq(schema.sessions.token, sha256(token)));
    expect(row).toBeDefined();
    expect(await storedTokens()).not.toContain(token);

    // Org switching updates the session found by its (hashed) token.
    const created = await auth("organization/create", cookie, { name: "Second org", slug: `second-${newId("org")}` });
    expect(created.status).toBe(200);
    const orgId = ((await created.json()) as { id: string }).id;
    expect(await auth("organization/set-active", cookie, { organizationId: row!.activeOrganizationId })).toHaveProperty("status", 200);
    expect(await auth("organization/set-active", cookie, { organizationId: orgId })).toHaveProperty("status", 200);
    const [switched] = await env.h.db.select().from(schema.sessions).where(eq(schema.sessions.id, row!.id));
    expect(switched?.activeOrganizationId).toBe(orgId);
    expect(switched?.token).toBe(sha256(token));

    expect(await runsStatus(cookie)).toBe(200);
    expect((await auth("sign-out", cookie)).status).toBe(200);
    expect(await env.h.db.select().from(schema.sessions).where(eq(schema.sessions.id, row!.id))).toEqual([]);
    expect(await runsStatus(cookie)).toBe(401);
    // The other session of the same account is untouched.
    expect(await runsStatus(first)).toBe(200);
  });

  it("lists a user's sessions without their cookie tokens, and has no revoke-by-token endpoint (its token would be the hash)", async () => {
    const cookie = await signUp(`list-${newId("usr")}@example.com`);
    const res = await authRoute.GET(new Request(`${BASE}/api/auth/list-sessions`, { headers: { cookie, origin: BASE } }));
    expect(res.status).toBe(200);
    const listed = (await res.json()) as { token: string }[];
    expect(listed).toHaveLength(1);
    expect(listed[0]?.token).toBe(sha256(tokenOf(cookie)));
    expect((await auth("revoke-session", cookie, { token: listed[0]?.token })).status).toBe(404);
    expect(await runsStatus(cookie)).toBe(200);
  });
});
