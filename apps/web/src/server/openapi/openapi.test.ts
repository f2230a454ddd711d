import { compileErrors, validate } from "@readme/openapi-parser";
import { createApiToken, DEFAULT_ORG_ID, revokeApiToken } from "@volley/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/v1/openapi.json/route";
import { call, startApiTestEnv, type ApiTestEnv } from "../test-support/api-test-env";
import { API_ROUTES, openApiDocument } from "./openapi";
import { referenceOperations } from "./openapi-reference";

type Schema = { $ref?: string; required?: string[]; properties?: Record<string, unknown> };

/** Follows a local `#/components/schemas/X` reference. */
function resolve(doc: ReturnType<typeof openApiDocument>, schema: unknown): Schema {
  const s = schema as Schema;
  if (!s.$ref) return s;
  const name = s.$ref.replace("#/components/schemas/", "");
  return doc.components?.schemas?.[name] as Schema;
}

let env: ApiTestEnv;
let token = "";
let revoked = "";
beforeAll(async () => {
  env = await startApiTestEnv();
  token = (await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "docs", scopes: ["read"] })).secret;
  const gone = await createApiToken(env.h.db, { orgId: DEFAULT_ORG_ID, name: "gone", scopes: ["read"] });
  await revokeApiToken(env.h.db, DEFAULT_ORG_ID, gone.token.id);
  revoked = gone.secret;
});
afterAll(async () => {
  await env?.close();
});

type Operation = { security?: Record<string, string[]>[]; requestBody?: unknown; responses: Record<string, unknown> };

describe("OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const doc = openApiDocument();
    expect(doc.openapi).toBe("3.1.0");
    // validate() dereferences in place; give it a copy so the cached document stays untouched.
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
  });

  it("describes every /api/v1 route, each with the one error shape", () => {
    const doc = openApiDocument();
    for (const { method, path } of API_ROUTES) {
      const op = doc.paths?.[path]?.[method];
      expect(op, `${method.toUpperCase()} ${path}`).toBeDefined();
    }
    for (const path of ["/api/v1/runs/{id}", "/api/v1/runs/{id}/intervals", "/api/v1/runs/{id}/abort"]) {
      const op = Object.values(doc.paths?.[path] ?? {})[0] as { responses: Record<string, { content: Record<string, { schema: unknown }> }> };
      expect(op.responses["404"]?.content["application/json"]?.schema).toEqual({ $ref: "#/components/schemas/ApiError" });
      expect(op.responses["503"]).toBeDefined();
    }
    expect(resolve(doc, { $ref: "#/components/schemas/ApiError" }).required).toEqual(["error"]);
  });

  it("takes `plan` (a full plan document) or `planId` in the POST /api/v1/runs body", () => {
    const doc = openApiDocument();
    const body = doc.paths?.["/api/v1/runs"]?.post?.requestBody as { required: boolean; content: Record<string, { schema: unknown }> };
    expect(body.required).toBe(true);
    const schema = resolve(doc, body.content["application/json"]?.schema);
    expect(Object.keys(schema.properties ?? {})).toEqual(expect.arrayContaining(["plan", "planId"]));
    expect(resolve(doc, schema.properties?.plan).required).toEqual(expect.arrayContaining(["name", "target", "connections", "scenario"]));
  });

  it("saves a plan as `plan` (JSON) or `yaml` (text kept as written), and answers the written `yaml` with every plan and version", () => {
    const doc = openApiDocument();
    const body = doc.paths?.["/api/v1/plans"]?.post?.requestBody as { content: Record<string, { schema: unknown }> };
    const schema = resolve(doc, body.content["application/json"]?.schema);
    expect(Object.keys(schema.properties ?? {}).sort()).toEqual(["plan", "yaml"]);
    expect(schema.required ?? []).toEqual([]);
    for (const name of ["PlanRecord", "PlanVersion"]) {
      const record = resolve(doc, { $ref: `#/components/schemas/${name}` });
      expect(record.required, name).toContain("yaml");
      expect(JSON.stringify(record.properties?.yaml), name).toMatch(/as its author wrote it/);
    }
  });

  it("is served at GET /api/v1/openapi.json, with or without an API token", async () => {
    const res = await GET(new Request("http://web.test/api/v1/openapi.json"), { params: Promise.resolve({}) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(body.openapi).toBe("3.1.0");
    expect(Object.keys(body.paths)).toContain("/api/v1/runs/{id}/abort");
    expect((await call(GET, "GET", "/api/v1/openapi.json", { token })).status).toBe(200);
    // Credentials that are sent are checked even here, so a revoked token is noticed early.
    expect((await call(GET, "GET", "/api/v1/openapi.json", { token: revoked })).status).toBe(401);
  });

  it("declares Bearer-token and session auth; token management is session-only; the document is public", () => {
    const doc = openApiDocument();
    expect(Object.keys(doc.components?.securitySchemes ?? {}).sort()).toEqual(["bearerAuth", "sessionCookie"]);
    expect(doc.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);
    for (const { method, path } of API_ROUTES) {
      const op = doc.paths?.[path]?.[method] as Operation;
      if (path === "/api/v1/openapi.json") {
        expect(op.security).toEqual([]);
        continue;
      }
      for (const status of ["401", "403", "429"]) expect(op.responses[status], `${method} ${path} ${status}`).toBeDefined();
      // Every body goes through the size limit.
      if (op.requestBody) expect(op.responses["413"], `${method} ${path} 413`).toBeDefined();
      if (path.startsWith("/api/v1/tokens") || path.startsWith("/api/v1/agent-tokens"))
        expect(op.security, `${method} ${path}`).toEqual([{ sessionCookie: [] }]);
    }
  });

  it("flattens into the /api-docs reference with schema names", () => {
    const create = referenceOperations().find((o) => o.method === "POST" && o.path === "/api/v1/runs");
    expect(create?.requestBody).toBe("CreateRunBody");
    expect(create?.responses).toContainEqual(expect.objectContaining({ status: "201", schema: "CreateRunResponse" }));
    expect(create?.responses).toContainEqual(expect.objectContaining({ status: "400", schema: "ApiError" }));
  });
});
