import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditEvent, TargetHost } from "@volley/contracts";
import { createApiToken, DEFAULT_ORG_ID, schema } from "@volley/db";
import { eq } from "drizzle-orm";
import type { RouteHandler } from "../http/api-handler";
import { call, connectTestAgent, readError, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";
import { checkProof } from "@volley/admission";

// Target ownership (hosted mode), the target policy at run start, and the audit log.

let env: ApiTestEnv;
let routes: { add: RouteHandler; list: RouteHandler; verify: RouteHandler; remove: RouteHandler; audit: RouteHandler; run: RouteHandler };
let owner = "";
let token = "";
let hostOwner: Server;
let ownerPort = 0;
const served = new Set<string>();

const plan = (url: string, count = 2) => ({
  name: "policy",
  target: { url, protocol: "ws" },
  connections: { count, rate: 10 },
  scenario: { kind: "echo", message: { rate: 1 }, duration: "2s" },
});

beforeAll(async () => {
  env = await startApiTestEnv();
  const t = await import("@/app/api/v1/targets/route");
  routes = {
    add: t.POST,
    list: t.GET,
    verify: (await import("@/app/api/v1/targets/[id]/verify/route")).POST,
    remove: (await import("@/app/api/v1/targets/[id]/route")).DELETE,
    audit: (await import("@/app/api/v1/audit/route")).GET,
    run: (await import("@/app/api/v1/runs/route")).POST,
  };
  owner = await signUp("targets-owner@example.com", "Owner");
  token = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "t", scopes: ["read", "run"] })).secret;
  await connectTestAgent(env.h.db, DEFAULT_ORG_ID); // runs are refused when their pool has no agent
  // A host owner's web server: serves a token at the well-known path once it is "published".
  hostOwner = createServer((req, res) => {
    const m = /^\/\.well-known\/volley-verify\/(.+)$/.exec(req.url ?? "");
    if (m && served.has(m[1]!)) return void res.end(`${m[1]}\n`);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => hostOwner.listen(0, "127.0.0.1", r));
  ownerPort = (hostOwner.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((r) => hostOwner?.close(r));
  await env?.close();
});

function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return fn().finally(() => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

describe("ownership proof", () => {
  it("finds the token at the well-known URL or in a TXT record, and nothing else", async () => {
    const ports = { https: ownerPort, http: ownerPort };
    served.add("vv_good");
    // https on a plain-HTTP port fails; the http fallback finds it.
    expect(await checkProof("127.0.0.1", "vv_good", { ports, timeoutMs: 2000 })).toBe("http");
    expect(await checkProof("127.0.0.1", "vv_absent", { ports, timeoutMs: 2000, txt: async () => [] })).toBeNull();
    const txt = async () => [["volley-verify=vv_", "dns"], ["v=spf1 -all"]];
    expect(await checkProof("127.0.0.1", "vv_dns", { ports, timeoutMs: 2000, txt })).toBe("dns");
  });
});

describe("targets API", () => {
  it("adds a host once with a token and instructions, lists it, and is for admins' sessions only", async () => {
    const res = await call(routes.add, "POST", "/api/v1/targets", { cookie: owner }, { host: "API.Example.com" });
    expect(res.status).toBe(201);
    const added = (await res.json()) as TargetHost;
    expect(added).toMatchObject({ host: "api.example.com", verified: false, method: null });
    expect(added.token).toMatch(/^vv_[0-9a-f]{32}$/);
    expect(added.instructions.http).toContain(`https://api.example.com/.well-known/volley-verify/${added.token}`);
    expect(added.instructions.dns).toContain(`volley-verify=${added.token}`);
    const again = (await (await call(routes.add, "POST", "/api/v1/targets", { cookie: owner }, { host: "api.example.com" })).json()) as TargetHost;
    expect(again.id).toBe(added.id);
    const listed = (await (await call(routes.list, "GET", "/api/v1/targets", { token })).json()) as { targets: TargetHost[] };
    expect(listed.targets.map((t) => t.host)).toEqual(["api.example.com"]);
    expect((await call(routes.add, "POST", "/api/v1/targets", { token }, { host: "x.example.com" })).status).toBe(403);
    const bad = await call(routes.add, "POST", "/api/v1/targets", { cookie: owner }, { host: "https://x.example.com:8443/" });
    expect(bad.status).toBe(400);
    expect((await readError(bad)).message).toContain("host");
    expect((await call(routes.remove, "DELETE", `/api/v1/targets/${added.id}`, { cookie: owner }, undefined, { id: added.id })).status).toBe(204);
    expect((await call(routes.verify, "POST", `/api/v1/targets/${added.id}/verify`, { cookie: owner }, undefined, { id: added.id })).status).toBe(404);
  });

  it("audits every run start: who, which host, what it resolved to", async () => {
    const res = await call(routes.run, "POST", "/api/v1/runs", { token }, { plan: plan("ws://localhost:9001/echo") });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const { events } = (await (await call(routes.audit, "GET", "/api/v1/audit?limit=5", { cookie: owner })).json()) as { events: AuditEvent[] };
    expect(events[0]).toMatchObject({ action: "run.start", runId: id, targetHost: "localhost" });
    expect(events[0]!.actor).toMatch(/^token:tok_/);
    expect(events[0]!.addresses!.length).toBeGreaterThan(0);
    expect((await call(routes.audit, "GET", "/api/v1/audit", { token })).status).toBe(403);
  });

  it("hosted mode: refuses private addresses, unverified hosts and plans over quota, naming why", async () => {
    await withEnv({ VOLLEY_MODE: "hosted", AUTH_SECRET: "a-hosted-test-secret-of-32-characters!!", VOLLEY_QUOTA_CONNECTIONS: "100" }, async () => {
      const loopback = await call(routes.run, "POST", "/api/v1/runs", { token }, { plan: plan("ws://127.0.0.1:9001/echo") });
      expect(loopback.status).toBe(403);
      expect(await readError(loopback)).toMatchObject({ code: "target_refused", message: expect.stringContaining("127.0.0.1 (loopback)") });
      const unverified = await call(routes.run, "POST", "/api/v1/runs", { token }, { plan: plan("ws://93.184.215.14/echo") });
      expect(unverified.status).toBe(403);
      const refused = await readError(unverified);
      expect(refused).toMatchObject({ code: "target_unverified", message: expect.stringContaining("POST /api/v1/targets") });
      // What it says to do, the targets API takes: an IP address cannot be added, so it is told to use a host name.
      expect(refused.message).not.toContain('{"host":"93.184.215.14"}');
      expect(refused.message).toMatch(/never for an IP address: in plan\.target\.url, use a host name you own/);
      const big = await call(routes.run, "POST", "/api/v1/runs", { token }, { plan: plan("ws://93.184.215.14/echo", 500) });
      expect(await readError(big)).toMatchObject({ code: "quota_exceeded", message: expect.stringMatching(/\d+ connections.* > 100/) });
      // The org's own quota overrides the install's default.
      await env.h.db
        .update(schema.orgs)
        .set({ quotas: { connections: 1000 } })
        .where(eq(schema.orgs.id, DEFAULT_ORG_ID));
      const allowed = await call(routes.run, "POST", "/api/v1/runs", { token }, { plan: plan("ws://93.184.215.14/echo", 500) });
      expect((await readError(allowed)).code).toBe("target_unverified"); // past the quota, stopped at ownership
      await env.h.db.update(schema.orgs).set({ quotas: null }).where(eq(schema.orgs.id, DEFAULT_ORG_ID));
    });
    const ip = await call(routes.add, "POST", "/api/v1/targets", { cookie: owner }, { host: "93.184.215.14" });
    expect([ip.status, (await readError(ip)).message]).toEqual([400, expect.stringContaining("give a DNS host name")]);
  });

  it("checks every host a flow's requests reach, as it checks target.url's", async () => {
    const withLogin = (loginUrl: string) => ({
      ...plan("ws://93.184.215.14/echo"),
      flow: {
        setup: [{ request: { name: "login", method: "POST", url: loginUrl, capture: { token: "$.token" } } }],
        messages: [{ json: { t: "{{ vars.token }}" }, reply: {} }],
      },
    });
    await withEnv({ VOLLEY_MODE: "hosted", AUTH_SECRET: "a-hosted-test-secret-of-32-characters!!" }, async () => {
      // The target is public, the log-in is not: refused on the request's own field.
      const privateLogin = await call(routes.run, "POST", "/api/v1/runs", { token }, { plan: withLogin("http://127.0.0.1:9/login") });
      expect(privateLogin.status).toBe(403);
      expect(await readError(privateLogin)).toMatchObject({ code: "target_refused", issues: [{ path: "plan.flow.setup.0.request.url" }] });
    });
    // Self-hosted: a log-in host that is not loopback must be on the allowlist, like the target.
    await withEnv({ VOLLEY_TARGET_ALLOWLIST: "93.184.215.14" }, async () => {
      const elsewhere = await call(routes.run, "POST", "/api/v1/runs", { token }, { plan: withLogin("http://93.184.215.15/login") });
      expect(elsewhere.status).toBe(403);
      expect(await readError(elsewhere)).toMatchObject({
        code: "target_refused",
        message: expect.stringContaining("93.184.215.15"),
        issues: [{ path: "plan.flow.setup.0.request.url" }],
      });
    });
  });

  it("a bad admission variable answers 500 misconfigured naming it and the fix (@volley/admission's parser, the hub's too)", async () => {
    for (const [name, value, fix] of [
      ["VOLLEY_QUOTA_RATE", "abc", "whole number ≥ 1"],
      ["VOLLEY_QUOTA_CONNECTIONS", "0", "whole number ≥ 1"],
      ["VOLLEY_TARGET_ALLOWLIST", "https://api.example.com", "not a host name, *.suffix, address or CIDR range"],
    ] as const) {
      await withEnv({ [name]: value }, async () => {
        const res = await call(routes.run, "POST", "/api/v1/runs", { token }, { plan: plan("ws://127.0.0.1:9001/echo") });
        expect(res.status).toBe(500);
        const err = await readError(res);
        expect(err.code).toBe("misconfigured");
        expect(err.message.startsWith(`${name}=${JSON.stringify(value)}: `)).toBe(true);
        expect(err.message).toContain(fix);
      });
    }
  });
});
