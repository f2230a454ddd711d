import { openApiDocument } from "./openapi";

/** One operation of the API as the /api-docs page lists it. */
export interface ReferenceOperation {
  method: string;
  path: string;
  operationId: string;
  summary: string;
  description: string;
  parameters: { name: string; in: string; required: boolean; description: string }[];
  requestBody: string | null;
  responses: { status: string; description: string; schema: string | null }[];
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** A schema's display name: the component it references, or a short description of an inline one. */
export function schemaName(schema: unknown): string | null {
  if (!schema || typeof schema !== "object") return null;
  const s = schema as { $ref?: string; type?: unknown; items?: unknown; anyOf?: unknown[]; oneOf?: unknown[]; properties?: Record<string, unknown> };
  if (s.$ref) return s.$ref.split("/").pop() ?? s.$ref;
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return alternatives.map((a) => schemaName(a) ?? "?").join(" | ");
  if (s.type === "array") return `${schemaName(s.items) ?? "unknown"}[]`;
  if (s.properties)
    return `{ ${Object.entries(s.properties)
      .map(([k, v]) => `${k}: ${schemaName(v) ?? "unknown"}`)
      .join(", ")} }`;
  return typeof s.type === "string" ? s.type : null;
}

const jsonSchema = (content: unknown): unknown => (content as { "application/json"?: { schema?: unknown } } | undefined)?.["application/json"]?.schema;

/** The document flattened for reading: one entry per path and method, in document order. */
export function referenceOperations(): ReferenceOperation[] {
  const doc = openApiDocument();
  const out: ReferenceOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? "",
        summary: op.summary ?? "",
        description: op.description ?? "",
        parameters: (op.parameters ?? []).flatMap((p) =>
          "name" in p
            ? [
                {
                  name: p.name,
                  in: p.in,
                  required: p.required ?? false,
                  description: p.description ?? (p.schema && "description" in p.schema ? String(p.schema.description ?? "") : ""),
                },
              ]
            : [],
        ),
        requestBody: op.requestBody && "content" in op.requestBody ? schemaName(jsonSchema(op.requestBody.content)) : null,
        responses: Object.entries(op.responses ?? {}).map(([status, r]) => ({
          status,
          description: r && "description" in r ? String(r.description) : "",
          schema: r && "content" in r ? schemaName(jsonSchema(r.content)) : null,
        })),
      });
    }
  }
  return out;
}

/** Named schemas with their JSON Schema, for the page's schema section. */
export function referenceSchemas(): { name: string; json: string }[] {
  return Object.entries(openApiDocument().components?.schemas ?? {}).map(([name, schema]) => ({ name, json: JSON.stringify(schema, null, 2) }));
}
