import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
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
  // A protobuf codec's protoFile is read from the plan's folder and sent inline (the hub cannot read this disk).
  return parsePlanDocument(text, { readFile: (p) => readFileSync(resolve(dirname(file), p), "utf8") });
}

/** The issues as `path: message` lines, under a heading naming the file. */
export function formatIssues(file: string, issues: FieldIssue[]): string {
  const heading = `${file} is not a valid plan (${issues.length} ${issues.length === 1 ? "issue" : "issues"}):`;
  return `${[heading, ...issues.map((i) => `${i.path}: ${i.message}`)].join("\n")}\n`;
}
