import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE, readError, signUp, startApiTestEnv, TEST_PASSWORD, type ApiTestEnv, withEnv } from "../test-support/api-test-env";
import { clientAddress, PEER_HEADER, stampPeer } from "../http/client-address";

// Sign-in throttling (issue 18 item 4): the client address is the socket peer unless that peer is a
// trusted proxy (VOLLEY_TRUSTED_PROXIES), so a rotating X-Forwarded-For no longer buys fresh
// attempts; failed sign-ins are also limited per account, whatever the address.

let env: ApiTestEnv;
let signIn: (req: Request) => Promise<Response>;

beforeAll(async () => {
  env = await startApiTestEnv();
  signIn = (await import("@/app/api/auth/[...all]/route")).POST;
});

afterAll(async () => {
  await env?.close();
});

/** A sign-in as Next hands it to the route behind server.ts: the peer stamped, any X-Forwarded-For as sent. */
const attempt = (peer: string, email: string, password: string, forwardedFor?: string) =>
  signIn(
    new Request(`${BASE}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: BASE, [PEER_HEADER]: peer, ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}) },
      body: JSON.stringify({ email, password }),
    }),
  );

const req = (headers: Record<string, string>) => new Request(`${BASE}/x`, { headers });

describe("client address", () => {
  it("is the socket peer when the peer is not a trusted proxy, whatever X-Forwarded-For says", () => {
    expect(clientAddress(req({ [PEER_HEADER]: "192.0.2.10", "x-forwarded-for": "203.0.113.1" }), [])).toBe("192.0.2.10");
    expect(clientAddress(req({ [PEER_HEADER]: "192.0.2.10", "x-forwarded-for": "203.0.113.1" }), ["10.0.0.0/8"])).toBe("192.0.2.10");
    expect(clientAddress(req({ [PEER_HEADER]: "::ffff:127.0.0.1" }), [])).toBe("127.0.0.1");
    expect(clientAddress(req({ "x-forwarded-for": "203.0.113.1" }), ["10.0.0.0/8"])).toBe("direct"); // no peer: not through server.ts
  });

  it("walks X-Forwarded-For from the right past trusted proxies, ignoring what the client prepended", () => {
    const trusted = ["10.0.0.0/8", "127.0.0.1"];
    expect(clientAddress(req({ [PEER_HEADER]: "10.1.2.3", "x-forwarded-for": "203.0.113.9" }), trusted)).toBe("203.0.113.9");
    // Client-forged left part, then the real client, then a second trusted proxy hop.
    expect(clientAddress(req({ [PEER_HEADER]: "::ffff:127.0.0.1", "x-forwarded-for": "6.6.6.6, 198.51.100.4, 10.9.9.9" }), trusted)).toBe("198.51.100.4");
    // Garbage where an address should be: the last proxy believed is the answer.
    expect(clientAddress(req({ [PEER_HEADER]: "10.1.2.3", "x-forwarded-for": "not-an-ip" }), trusted)).toBe("10.1.2.3");
    expect(clientAddress(req({ [PEER_HEADER]: "10.1.2.3", "x-forwarded-for": "[2001:db8::1]:4711" }), trusted)).toBe("2001:db8::1");
  });

  it("stampPeer replaces a client-sent peer header with the real socket peer", async () => {
    const server = createServer((r, res) => {
      stampPeer(r);
      res.end(String(r.headers[PEER_HEADER]));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { [PEER_HEADER]: "6.6.6.6" } });
      expect(clientAddress(req({ [PEER_HEADER]: await res.text() }), [])).toBe("127.0.0.1");
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("refuses a malformed VOLLEY_TRUSTED_PROXIES naming the variable", async () => {
    await withEnv({ VOLLEY_TRUSTED_PROXIES: "10.0.0.0/8, proxy.internal" }, async () => {
      expect(() => clientAddress(req({ [PEER_HEADER]: "10.0.0.1" }))).toThrow(/VOLLEY_TRUSTED_PROXIES entry "proxy.internal"/);
    });
  });
});

describe("per-address sign-in limit", () => {
  it("still limits an untrusted peer that rotates X-Forwarded-For", async () => {
    await withEnv({ VOLLEY_SIGNIN_RATE_LIMIT: "3" }, async () => {
      for (let i = 1; i <= 3; i++) expect((await attempt("192.0.2.10", `rot${i}@example.com`, "wrong password", `203.0.113.${i}`)).status).toBe(401);
      const limited = await attempt("192.0.2.10", "rot4@example.com", "wrong password", "203.0.113.4");
      expect(limited.status).toBe(429);
      expect((await readError(limited)).message).toMatch(/too many sign-in attempts/);
    });
  });

  it("honours a trusted proxy's X-Forwarded-For: each client behind it has its own limit", async () => {
    await withEnv({ VOLLEY_SIGNIN_RATE_LIMIT: "2", VOLLEY_TRUSTED_PROXIES: "127.0.0.1" }, async () => {
      for (let i = 1; i <= 4; i++) expect((await attempt("127.0.0.1", `behind${i}@example.com`, "wrong password", `198.51.100.${i}`)).status).toBe(401);
      expect((await attempt("127.0.0.1", "same1@example.com", "wrong password", "198.51.100.50")).status).toBe(401);
      expect((await attempt("127.0.0.1", "same2@example.com", "wrong password", "198.51.100.50")).status).toBe(401);
      expect((await attempt("127.0.0.1", "same3@example.com", "wrong password", "198.51.100.50")).status).toBe(429);
    });
  });
});

describe("per-account sign-in limit", () => {
  it("stops guessing one account from many addresses, even with the right password, and leaves other accounts alone", async () => {
    await signUp("victim@example.com");
    await signUp("bystander@example.com");
    await withEnv({ VOLLEY_ACCOUNT_SIGNIN_LIMIT: "3" }, async () => {
      for (let i = 1; i <= 3; i++) expect((await attempt(`192.0.2.${100 + i}`, "victim@example.com", `guess ${i}`)).status).toBe(401);
      const limited = await attempt("192.0.2.200", "Victim@Example.com", TEST_PASSWORD);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await readError(limited)).toMatchObject({
        code: "rate_limited",
        message: expect.stringMatching(/too many failed sign-ins for this account \(limit 3 per 15 minutes\)/),
      });
      expect((await attempt("192.0.2.200", "bystander@example.com", TEST_PASSWORD)).status).toBe(200);
    });
  });

  it("clears an account's count when its owner signs in", async () => {
    await signUp("forgetful@example.com");
    await withEnv({ VOLLEY_ACCOUNT_SIGNIN_LIMIT: "3" }, async () => {
      for (let i = 1; i <= 2; i++) expect((await attempt("192.0.2.150", "forgetful@example.com", `typo ${i}`)).status).toBe(401);
      expect((await attempt("192.0.2.150", "forgetful@example.com", TEST_PASSWORD)).status).toBe(200);
      for (let i = 3; i <= 5; i++) expect((await attempt("192.0.2.150", "forgetful@example.com", `typo ${i}`)).status).toBe(401);
    });
  });
});
