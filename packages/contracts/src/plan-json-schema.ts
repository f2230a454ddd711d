import { z } from "zod";
import { planSchema } from "./plan";

let cached: Record<string, unknown> | undefined;

/**
 * The plan schema as JSON Schema (draft 2020-12), for editors' completion and inline checks. Made
 * from the zod schema, so it cannot drift; cross-field rules (superRefine) are not expressible in
 * it and stay with parsePlanDocument, which remains the judge.
 */
export function planJsonSchema(): Record<string, unknown> {
  cached ??= z.toJSONSchema(planSchema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return cached;
}
