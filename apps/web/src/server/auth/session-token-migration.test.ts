import { createHash, createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_ORG_ID, migrateDatabase, newId, schema } from "@volley/db";
import { eq } from "drizzle-orm";
import { call, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// Migration 0019 hashes the session tokens stored as sent before it, so whoever was signed in then
// stays signed in: their cookie (over the plain token) finds the hashed row.

const SECRET = "session-token-migration-test-secret-0123456789";
const signedCookie = (token: string) =>
  `better-auth.session_token=${encodeURIComponent(`${token}.${createHmac("sha256", SECRET).update(token).digest("base64")}`)}`;

let env: ApiTestEnv;

beforeAll(async () => {
  process.env.AUTH_SECRET = SECRET;
  env = await startApiTestEnv({ upTo: "0018_run_rate_changes" });
});

afterAll(async () => {
  await env?.close();
  delete process.env.AUTH_SECRET;
});

describe("migration 0019 (session tokens hashed at rest)", () => {
  it("hashes a session row written with its plain token, which then still authenticates its cookie", async () => {
    const db = env.h.db;
    const userId = newId("usr");
    // 32 characters, as better-auth's generateId(32) makes them.
    const token = "AbCdEfGhIjKlMnOpQrStUvWxYz012345";
    await db.insert(schema.users).values({ id: userId, name: "Before", email: `before-${userId}@example.com` });
    await db.insert(schema.members).values({ id: newId("mem"), organizationId: DEFAULT_ORG_ID, userId, role: "owner" });
    const sessionId = newId("ses");
    await db
      .insert(schema.sessions)
      .values({ id: sessionId, token, userId, expiresAt: new Date(Date.now() + 86_400_000), activeOrganizationId: DEFAULT_ORG_ID });

    await migrateDatabase(env.url);

    const [row] = await db.select().from(schema.sessions).where(eq(schema.sessions.id, sessionId));
    expect(row?.token).toBe(createHash("sha256").update(token).digest("hex"));
    const { GET } = await import("@/app/api/v1/runs/route");
    expect((await call(GET, "GET", "/api/v1/runs", { cookie: signedCookie(token) })).status).toBe(200);
    // And the stored value, signed as a cookie, opens nothing.
    expect((await call(GET, "GET", "/api/v1/runs", { cookie: signedCookie(row!.token) })).status).toBe(401);
  });
});
