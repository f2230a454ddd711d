import { createDb, createTestDatabase, type DbHandle } from "@volley/db";
import { leaseRedisDb } from "@volley/devstack";
import { inject } from "vitest";
import "@volley/devstack/vitest-context";
import { z } from "zod";
import type { RouteHandler } from "../http/api-handler";

/**
 * Shared setup for the route-handler test files (not a test itself): a fresh database, this file's
 * own Redis db, env pointed at both, and request helpers. Route handlers are called directly with
 * `new Request(...)`; env.ts reads process.env per request, so setting it before the first request
 * is enough.
 */

export const BASE = "http://web.test";

export interface Credentials {
  /** An API token secret, sent as `Authorization: Bearer …`. */
  token?: string;
  /** A session cookie from signUp(). */
  cookie?: string;
  /** A raw Authorization header (to test malformed ones). */
  authorization?: string;
}

export interface ApiTestEnv {
  h: DbHandle;
  url: string;
  redisUrl: string;
  close: () => Promise<void>;
}

/**
 * A fresh database and a Redis logical database leased to this file alone (emptied), env pointed at
 * both. `upTo`: migrate only that far (a migration's tag), for tests of a later migration.
 */
export async function startApiTestEnv(opts: { upTo?: string } = {}): Promise<ApiTestEnv> {
  const testDb = await createTestDatabase(inject("databaseServerUrl"), opts);
  // Test files run side by side: each leases its own Redis database (rate-limit counters, queues).
  const lease = await leaseRedisDb(inject("redisUrl"));
  process.env.DATABASE_URL = testDb.url;
  process.env.REDIS_URL = lease.url;
  process.env.LOG_LEVEL = "silent";
  // web needs one (env.ts derives none); a file that sets its own keeps it.
  process.env.AUTH_SECRET ??= "api-test-env-auth-secret-0123456789abcdef";
  const h = createDb(testDb.url, 2);
  return {
    h,
    url: testDb.url,
    redisUrl: lease.url,
    close: async () => {
      const { closeServices } = await import("../http/services");
      await closeServices();
      await h.close();
      await testDb.drop();
      await lease.release();
    },
  };
}

export const ctx = (params: Record<string, string> = {}) => ({ params: Promise.resolve(params) });

/** A request to `path` with the given credentials and, when `body` is given, a JSON body. */
export function request(method: string, path: string, creds: Credentials = {}, body?: unknown): Request {
  const headers: Record<string, string> = {};
  if (creds.token !== undefined) headers.authorization = `Bearer ${creds.token}`;
  if (creds.authorization !== undefined) headers.authorization = creds.authorization;
  if (creds.cookie !== undefined) headers.cookie = creds.cookie;
  if (body !== undefined) headers["content-type"] = "application/json";
  return new Request(`${BASE}${path}`, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
}

/** Calls a route handler. */
export const call = (route: RouteHandler, method: string, path: string, creds: Credentials = {}, body?: unknown, params: Record<string, string> = {}) =>
  route(request(method, path, creds, body), ctx(params));

const errorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), issues: z.array(z.object({ path: z.string(), message: z.string() })).optional() }),
});

/** The `{ error }` body of a response; fails the test when the body has any other shape. */
export async function readError(res: Response) {
  return errorBody.parse(await res.json()).error;
}

export const TEST_PASSWORD = "correct horse battery staple";

/** Signs up through better-auth's own handler (POST /api/auth/sign-up/email) and returns the session cookie. */
export async function signUp(email: string, name = "Test User"): Promise<string> {
  const { POST } = await import("@/app/api/auth/[...all]/route");
  const res = await POST(
    new Request(`${BASE}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: BASE },
      body: JSON.stringify({ email, password: TEST_PASSWORD, name }),
    }),
  );
  if (res.status !== 200) throw new Error(`sign-up of ${email} answered ${res.status}: ${await res.text()}`);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .filter((c) => c.includes("session_token"))
    .join("; ");
  if (!cookie) throw new Error(`sign-up of ${email} set no session cookie`);
  return cookie;
}

/**
 * An agent row in `pool` of `orgId`, written the way a hub writes it when an agent connects: POST
 * /api/v1/runs refuses a plan whose pool has fewer connected agents than it asks for (preflight.ts).
 */
export async function connectTestAgent(db: DbHandle["db"], orgId: string, pool = "default", name = `test-agent-${pool}`): Promise<void> {
  const { upsertAgent } = await import("@volley/db");
  await upsertAgent(
    db,
    {
      token: "unused",
      instanceId: `${name}-${orgId}`,
      name,
      version: "0.1.0",
      pool,
      labels: {},
      capacity: { cores: 4, memoryMb: 4096, maxConnections: 50_000, sourceAddresses: [] },
    },
    { orgId },
  );
}

/** Runs `fn` with these environment variables set, then puts back what was there before. */
export async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
