import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@volley/devstack";
import ErrorBoundary from "@/app/error";
import { BASE, readError, signUp, startApiTestEnv, TEST_PASSWORD, type ApiTestEnv } from "../test-support/api-test-env";
import { sessionUser } from "../auth/auth";
import { forPage, PAGE_ERROR_DIGESTS } from "./page-errors";
import { getDb } from "./services";

// PostgreSQL down while web runs: DATABASE_URL points at a port where no server listens (what a
// stopped PostgreSQL leaves), then back at the live test database.

let env: ApiTestEnv;
let downUrl = "";
const EMAIL = "outage@example.com";
let cookie = "";

beforeAll(async () => {
  env = await startApiTestEnv();
  process.env.AUTH_SECRET = "database-outage-test-secret-0123456789abcdef"; // the same cookies before and during the outage
  downUrl = `postgres://volley:volley@127.0.0.1:${await freePort()}/volley`;
});
afterAll(async () => {
  process.env.DATABASE_URL = env.url;
  delete process.env.AUTH_SECRET;
  await env?.close();
});

async function signIn(): Promise<Response> {
  const { POST } = await import("@/app/api/auth/[...all]/route");
  return POST(
    new Request(`${BASE}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: BASE },
      body: JSON.stringify({ email: EMAIL, password: TEST_PASSWORD }),
    }),
  );
}

describe("web during a PostgreSQL outage", () => {
  it("answers sign-in and session reads with 503 unavailable saying the database is unreachable, then recovers", async () => {
    cookie = await signUp(EMAIL);
    expect((await signIn()).status).toBe(200);

    process.env.DATABASE_URL = downUrl;
    const res = await signIn();
    expect(res.status).toBe(503);
    const err = await readError(res);
    expect(err.code).toBe("unavailable");
    expect(err.message).toMatch(
      /^the database \(PostgreSQL at DATABASE_URL\) is unreachable \(.*ECONNREFUSED.*\) — check that it is running and DATABASE_URL is right$/,
    );

    const { GET } = await import("@/app/api/auth/[...all]/route");
    const session = await GET(new Request(`${BASE}/api/auth/get-session`, { headers: { cookie } }));
    expect(session.status).toBe(503);
    expect((await readError(session)).message).toContain("the database (PostgreSQL at DATABASE_URL) is unreachable");

    process.env.DATABASE_URL = env.url;
    expect((await signIn()).status).toBe(200);
    // Wrong passwords are still better-auth's own 401, not an outage.
    const { POST } = await import("@/app/api/auth/[...all]/route");
    const wrong = await POST(
      new Request(`${BASE}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: BASE },
        body: JSON.stringify({ email: EMAIL, password: "not the password" }),
      }),
    );
    expect(wrong.status).toBe(401);
  });

  it("gives pages an error whose digest the error page turns into 'The database is unreachable'", async () => {
    process.env.DATABASE_URL = downUrl;
    const caught = (e: unknown) => e as Error & { digest?: string };
    // What every signed-in page does first (pageSession), and what sign-in and sign-up pages ask (hasUsers).
    const thrown = await forPage(() => sessionUser({ headers: new Headers({ cookie }) })).then(() => null, caught);
    const firstVisit = await forPage(() => getDb().execute("select 1")).then(() => null, caught);
    process.env.DATABASE_URL = env.url;
    expect(thrown?.digest).toBe(PAGE_ERROR_DIGESTS.database);
    expect(firstVisit?.digest).toBe(PAGE_ERROR_DIGESTS.database);

    // What the browser gets: Next passes the digest, not the message, to app/error.tsx.
    const html = renderToStaticMarkup(createElement(ErrorBoundary, { error: Object.assign(new Error(""), { digest: thrown!.digest }), reset: () => {} }));
    expect(html).toContain("The database is unreachable");
    expect(html).toContain("DATABASE_URL");
    expect(html).not.toContain("127.0.0.1"); // no addresses for anonymous visitors
    const other = renderToStaticMarkup(createElement(ErrorBoundary, { error: Object.assign(new Error(""), { digest: "12345" }), reset: () => {} }));
    expect(other).toContain("This page failed to load");

    // A bug is not dressed up as an outage.
    const bug = new Error("boom");
    await expect(forPage(() => Promise.reject(bug))).rejects.toBe(bug);
  });
});
