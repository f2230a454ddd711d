import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { agentStatusSchema, API_ERROR_CODES, FINAL_RUN_STATUSES, runStatusSchema } from "@volley/contracts";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "./openapi";

type Response = { description: string; content?: Record<string, { schema: unknown }> };
type Operation = { description?: string; parameters?: { name: string; schema: { enum?: string[] } }[]; responses: Record<string, Response> };

const doc = openApiDocument();
const operations = Object.values(doc.paths ?? {}).flatMap((methods) => Object.values(methods as Record<string, Operation>));
const operation = (path: string, method: string) => (doc.paths as Record<string, Record<string, Operation>>)[path]![method]!;

/**
 * Every (status, code) the web source throws or answers with as a literal: `new ApiError(403, "target_refused", …)`,
 * and the refusals of the admission rules web shares with the hub (`new AdmissionRefusal("quota_exceeded", …)`, the code's own status).
 */
function emittedCodes(): { status: number; code: string; file: string }[] {
  const found: { status: number; code: string; file: string }[] = [];
  const scan = (dir: string, each: (text: string, file: string) => void) => {
    for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
      if (!/\.tsx?$/.test(entry) || entry.endsWith(".test.ts")) continue;
      each(readFileSync(join(dir, entry), "utf8"), entry);
    }
  };
  scan(join(import.meta.dirname, "..", ".."), (text, file) => {
    for (const m of text.matchAll(/(?:new ApiError|errorResponse)\(\s*(\d{3}),\s*"([a-z_]+)"/g)) found.push({ status: Number(m[1]), code: m[2]!, file });
  });
  scan(join(import.meta.dirname, "..", "..", "..", "..", "..", "packages", "admission", "src"), (text, file) => {
    for (const m of text.matchAll(/new AdmissionRefusal\(\s*"([a-z_]+)"/g)) {
      const code = m[1] as keyof typeof API_ERROR_CODES;
      found.push({ status: API_ERROR_CODES[code].status, code, file: `@volley/admission ${file}` });
    }
  });
  return found;
}

describe("OpenAPI error codes", () => {
  it("lists every code in the ApiError schema's closed enum", () => {
    const schema = doc.components?.schemas?.ApiError as { properties: { error: { properties: { code: { enum: string[] } } } } };
    expect(schema.properties.error.properties.code.enum.sort()).toEqual(Object.keys(API_ERROR_CODES).sort());
  });

  it("documents every code the server throws, under the status it is thrown with", () => {
    const emitted = emittedCodes();
    // The scan itself must see the ones that were once undocumented.
    expect(emitted.map((e) => e.code)).toEqual(expect.arrayContaining(["target_refused", "target_unverified", "quota_exceeded", "not_found"]));
    for (const { status, code, file } of emitted) {
      const descriptions = operations.map((op) => op.responses[String(status)]?.description ?? "");
      expect(
        descriptions.some((d) => d.includes(`\`${code}\``)),
        `${file}: ${status} ${code} is in no ${status} response's description`,
      ).toBe(true);
    }
  });

  it("names the refusals of POST /api/v1/runs under 403 and 409", () => {
    const create = operation("/api/v1/runs", "post");
    for (const code of ["forbidden", "target_refused", "target_unverified", "quota_exceeded"])
      expect(create.responses["403"]?.description).toContain(`\`${code}\``);
    expect(create.responses["409"]?.description).toContain("`not_enough_agents`");
  });
});

describe("OpenAPI status descriptions", () => {
  it("describe every run status, and name every final one", () => {
    const get = operation("/api/v1/runs/{id}", "get");
    for (const status of runStatusSchema.options) expect(get.description).toContain(`\`${status}\``);
    expect(get.description).toContain(`final: ${FINAL_RUN_STATUSES.join(", ")}`);
    expect(FINAL_RUN_STATUSES).toContain("degraded");
    const filter = operation("/api/v1/runs", "get").parameters?.find((p) => p.name === "status");
    expect(filter?.schema.enum).toEqual(runStatusSchema.options);
  });

  it("describe every agent status", () => {
    const list = operation("/api/v1/agents", "get");
    for (const status of agentStatusSchema.options) expect(list.description).toContain(`\`${status}\``);
  });
});
