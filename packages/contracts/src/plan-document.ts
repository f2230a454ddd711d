import { parse as parseYaml, YAMLParseError } from "yaml";
import { planSchema, type Plan } from "./plan";
import { fieldIssues, type FieldIssue } from "./errors";
import { inlineProtoFiles } from "./flow-codec";
import { requiredFieldError } from "./required-field";

export type PlanParseResult = { ok: true; plan: Plan } | { ok: false; issues: FieldIssue[] };

/** Parses a plan written as YAML or JSON (JSON is YAML) and validates it. */
export function parsePlanDocument(
  text: string,
  /** CLIs only: reads a flow codec's protoFile (relative to the plan file) to inline it as proto. */
  options: { readFile?: (path: string) => string } = {},
): PlanParseResult {
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: true });
  } catch (err) {
    const message = err instanceof YAMLParseError ? err.message : String(err);
    return { ok: false, issues: [{ path: "(document)", message: `not valid YAML or JSON: ${message}` }] };
  }
  if (options.readFile) {
    const unread = inlineProtoFiles(doc, options.readFile);
    if (unread.length > 0) return { ok: false, issues: unread };
  }
  return validatePlan(doc);
}

export function validatePlan(doc: unknown): PlanParseResult {
  const result = planSchema.safeParse(doc, { error: requiredFieldError });
  if (result.success) return { ok: true, plan: result.data };
  return { ok: false, issues: fieldIssues(result.error) };
}
