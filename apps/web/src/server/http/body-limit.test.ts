import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiToken, DEFAULT_ORG_ID } from "@volley/db";
import type { RouteHandler } from "./api-handler";
import { BASE, ctx, readError, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";
import { AUTH_BODY_LIMIT } from "./body-limit";

// Request body limits: the API (plans included) reads at most VOLLEY_MAX_BODY_BYTES (1 MiB by
// default), the auth routes 16 KiB; past either, 413 payload_too_large naming the limit, whether
// the size is declared up front or only discovered while a chunked body streams in.

const API_LIMIT = 1_048_576;
let env: ApiTestEnv;
let token = "";
let validate: RouteHandler;
let signIn: (req: Request) => Promise<Response>;

beforeAll(async () => {
  env = await startApiTestEnv();
  token = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "body", scopes: ["read", "run"] })).secret;
  validate = (await import("@/app/api/v1/plans/validate/route")).POST;
  signIn = (await import("@/app/api/auth/[...all]/route")).POST;
});

afterAll(async () => {
  await env?.close();
});

/** A chunked body of up to `max` bytes (bounded), counting how much of it the server pulled. */
function endlessBody(max: number, chunk = 64 * 1024) {
  const state = { pulled: 0 };
  const piece = new TextEncoder().encode(`{"name":"${"x".repeat(chunk - 10)}`.slice(0, chunk));
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= max) return controller.close();
      state.pulled += piece.byteLength;
      controller.enqueue(piece);
    },
  });
  return { stream, state };
}

const apiRequest = (init: { headers?: Record<string, string>; body: BodyInit }) =>
  new Request(`${BASE}/api/v1/plans/validate`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers },
    body: init.body,
    duplex: "half",
  } as RequestInit);

const signInRequest = (init: { headers?: Record<string, string>; body: BodyInit }) =>
  new Request(`${BASE}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: BASE, ...init.headers },
    body: init.body,
    duplex: "half",
  } as RequestInit);

describe("API request bodies", () => {
  it("refuses a declared Content-Length over the limit before reading, with 413 naming the limit", async () => {
    const res = await validate(apiRequest({ headers: { "content-length": String(600 * 1024 * 1024) }, body: "{}" }), ctx());
    expect(res.status).toBe(413);
    const err = await readError(res);
    expect(err.code).toBe("payload_too_large");
    expect(err.message).toContain(`the limit is ${API_LIMIT} bytes`);
    expect(err.message).toContain("VOLLEY_MAX_BODY_BYTES");
  });

  it("stops reading a chunked body as soon as it passes the limit", async () => {
    const { stream, state } = endlessBody(32 * 1024 * 1024);
    const res = await validate(apiRequest({ body: stream }), ctx());
    expect(res.status).toBe(413);
    expect((await readError(res)).message).toContain(`the limit is ${API_LIMIT} bytes`);
    // Bounded memory: the reader gave up just past 1 MiB, not after the 32 MiB on offer.
    expect(state.pulled).toBeLessThan(API_LIMIT + 4 * 64 * 1024);
  });

  it("still reads a body just under the limit", async () => {
    const padded = JSON.stringify({ yaml: `# ${"p".repeat(API_LIMIT - 200)}\nname: x\n` });
    expect(padded.length).toBeLessThan(API_LIMIT);
    const res = await validate(apiRequest({ body: padded }), ctx());
    expect(res.status).toBe(400); // read and parsed: the YAML is not a complete plan
    expect((await readError(res)).code).toBe("invalid_body");
  });

  it("follows VOLLEY_MAX_BODY_BYTES", async () => {
    process.env.VOLLEY_MAX_BODY_BYTES = "100";
    try {
      const res = await validate(apiRequest({ body: JSON.stringify({ yaml: "x".repeat(200) }) }), ctx());
      expect(res.status).toBe(413);
      expect((await readError(res)).message).toContain("the limit is 100 bytes");
    } finally {
      delete process.env.VOLLEY_MAX_BODY_BYTES;
    }
  });
});

describe("sign-in request bodies", () => {
  it("refuses a declared Content-Length over 16 KiB with 413", async () => {
    const res = await signIn(signInRequest({ headers: { "content-length": String(300 * 1024 * 1024) }, body: "{}" }));
    expect(res.status).toBe(413);
    const err = await readError(res);
    expect(err.code).toBe("payload_too_large");
    expect(err.message).toContain(`the limit is ${AUTH_BODY_LIMIT} bytes`);
  });

  it("stops reading a chunked sign-in body just past 16 KiB", async () => {
    const { stream, state } = endlessBody(32 * 1024 * 1024, 4096);
    const res = await signIn(signInRequest({ body: stream }));
    expect(res.status).toBe(413);
    expect((await readError(res)).message).toContain(`the limit is ${AUTH_BODY_LIMIT} bytes`);
    expect(state.pulled).toBeLessThan(AUTH_BODY_LIMIT + 4 * 4096);
  });

  it("passes an ordinary sign-in body through to better-auth", async () => {
    const res = await signIn(signInRequest({ body: JSON.stringify({ email: "nobody@example.com", password: "wrong password" }) }));
    expect(res.status).toBe(401); // better-auth's answer: wrong email or password
  });
});
