import type { FieldIssue } from "@volley/contracts";
import { isNode, parseDocument } from "yaml";

export interface IssueRange {
  from: number;
  to: number;
  message: string;
}

/**
 * Where in the YAML text each plan issue belongs, so the editor can underline it: the value at the
 * issue's path, or, when that field is missing, the first line of the nearest enclosing field.
 */
export function planIssueRanges(text: string, issues: readonly FieldIssue[]): IssueRange[] {
  const doc = parseDocument(text);
  const firstLine = (from: number) => {
    const nl = text.indexOf("\n", from);
    return { from, to: nl === -1 ? text.length : nl };
  };
  return issues.map((issue) => {
    const syntax = issue.path === "(document)" ? doc.errors[0]?.pos : undefined;
    if (syntax) return { from: syntax[0], to: Math.max(syntax[1], syntax[0] + 1), message: issue.message };
    const segments = issue.path === "(document)" || issue.path === "" ? [] : issue.path.split(".").map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    for (let n = segments.length; n > 0; n--) {
      const node = doc.getIn(segments.slice(0, n), true);
      if (!isNode(node) || !node.range) continue;
      const [from, valueEnd] = node.range;
      return n === segments.length
        ? { from, to: Math.max(valueEnd, from + 1), message: issue.message }
        : { ...firstLine(from), message: `${issue.path}: ${issue.message}` };
    }
    return { ...firstLine(0), message: issue.path ? `${issue.path}: ${issue.message}` : issue.message };
  });
}
