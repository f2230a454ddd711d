import { z } from "zod";

/** The one error shape of every API response and every CLI --json failure. */
export const apiErrorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});
export type ApiError = z.infer<typeof apiErrorSchema>;

export interface FieldIssue {
  path: string;
  message: string;
}

/** Flattens zod issues into "field.path: message" items a person can act on. */
export function fieldIssues(error: z.ZodError, prefix = ""): FieldIssue[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter((p) => p !== "").join(".");
    return { path: path || "(root)", message: issue.message };
  });
}

export function describeIssues(issues: FieldIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join("; ");
}
