import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MetricsExport } from "@volley/contracts";
import { randomBytes } from "node:crypto";
import { DEFAULT_ORG_ID, isSealed, loadMetricsExport, parseSecretKeys, schema } from "@volley/db";
import { eq } from "drizzle-orm";
import type { RouteHandler } from "../http/api-handler";
import { call, readError, signUp, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";

// GET/PUT/DELETE /api/v1/metrics-export: org admins with a real signed-up session; the hub reads what is stored.

let env: ApiTestEnv;
let routes: { get: RouteHandler; put: RouteHandler; remove: RouteHandler };
let owner = "";
let other = "";
const SECRETS_KEY = randomBytes(32).toString("base64");
const keyBefore = process.env.VOLLEY_SECRETS_KEY;

beforeAll(async () => {
  env = await startApiTestEnv();
  process.env.VOLLEY_SECRETS_KEY = SECRETS_KEY;
  const r = await import("@/app/api/v1/metrics-export/route");
  routes = { get: r.GET, put: r.PUT, remove: r.DELETE };
  owner = await signUp("metrics-owner@example.com", "Owner");
  other = await signUp("metrics-other@example.com", "Other");
});

afterAll(async () => {
  if (keyBefore === undefined) delete process.env.VOLLEY_SECRETS_KEY;
  else process.env.VOLLEY_SECRETS_KEY = keyBefore;
  await env?.close();
});

const put = (cookie: string, body: unknown) => call(routes.put, "PUT", "/api/v1/metrics-export", { cookie }, body);
const get = async (cookie: string) =>
  ((await (await call(routes.get, "GET", "/api/v1/metrics-export", { cookie })).json()) as { metricsExport: MetricsExport | null }).metricsExport;

describe("metrics export API", () => {
  it("stores the org's remote-write endpoint with its Authorization sealed, never shown, and opened by the hub's reader", async () => {
    expect(await get(owner)).toBeNull();
    const res = await put(owner, { url: "https://prometheus.example.com/api/v1/write", authorization: "Bearer s3cret-token", labels: { env: "staging" } });
    expect(res.status).toBe(200);
    const { metricsExport } = (await res.json()) as { metricsExport: MetricsExport };
    expect(metricsExport).toMatchObject({
      kind: "prometheus-remote-write",
      url: "https://prometheus.example.com/api/v1/write",
      hasAuthorization: true,
      labels: { env: "staging" },
      enabled: true,
      lastPushAt: null,
    });
    expect(JSON.stringify(await get(owner))).not.toContain("s3cret");
    const [row] = await env.h.db.select().from(schema.metricsExports).where(eq(schema.metricsExports.orgId, DEFAULT_ORG_ID));
    expect(isSealed(row!.authorization!)).toBe(true);
    expect((await loadMetricsExport(env.h.db, DEFAULT_ORG_ID, parseSecretKeys(SECRETS_KEY)))?.authorization).toBe("Bearer s3cret-token");
    // A PUT without `authorization` keeps the stored header; null removes it.
    await put(owner, { url: "https://prometheus.example.com/api/v1/write", enabled: false });
    expect(await get(owner)).toMatchObject({ hasAuthorization: true, enabled: false, labels: {} });
    await put(owner, { url: "https://prometheus.example.com/api/v1/write", authorization: null });
    expect(await get(owner)).toMatchObject({ hasAuthorization: false });
  });

  it("names bad fields with the fix", async () => {
    const bad = await put(owner, { url: "ftp://example.com/x" });
    expect(bad.status).toBe(400);
    expect((await readError(bad)).message).toMatch(/url.*http:\/\/ or https:\/\//);
    const reserved = await put(owner, { url: "https://p.example.com/api/v1/write", labels: { run_id: "x" } });
    expect((await readError(reserved)).message).toMatch(/labels.*set by Volley/);
    const badName = await put(owner, { url: "https://p.example.com/api/v1/write", labels: { "bad-name": "y" } });
    expect((await readError(badName)).message).toMatch(/labels.*letters, digits/);
  });

  it("is per org and removable; the other org sees none and cannot remove it", async () => {
    await put(owner, { url: "https://prometheus.example.com/api/v1/write" });
    expect(await get(other)).toBeNull();
    expect((await call(routes.remove, "DELETE", "/api/v1/metrics-export", { cookie: other })).status).toBe(404);
    expect((await call(routes.remove, "DELETE", "/api/v1/metrics-export", { cookie: owner })).status).toBe(204);
    expect(await get(owner)).toBeNull();
  });
});
