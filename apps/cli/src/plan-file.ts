import { readFile } from "node:fs/promises";
import { parsePlanDocument, type FieldIssue, type Plan } from "@volley/contracts";
import { UsageError } from "./io";

export type PlanFileResult = { ok: true; plan: Plan } | { ok: false; issues: FieldIssue[] };

/** Reads and validates a plan file; an unreadable file is a UsageError naming it and why. */
export async function readPlanFile(file: string): Promise<PlanFileResult> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : code === "EACCES"
            ? "permission denied"
            : String((err as Error).message ?? err);
    throw new UsageError(`cannot read plan file ${file}: ${why}`);
  }
  return parsePlanDocument(text);
}

/** The issues as `path: message` lines, under a heading naming the file. */
export function formatIssues(file: string, issues: FieldIssue[]): string {
  const heading = `${file} is not a valid plan (${issues.length} ${issues.length === 1 ? "issue" : "issues"}):`;
  return `${[heading, ...issues.map((i) => `${i.path}: ${i.message}`)].join("\n")}\n`;
}
