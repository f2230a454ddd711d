import { parsePlanDocument } from "@volley/contracts";
import { describe, expect, it } from "vitest";
import { planIssueRanges } from "./plan-issue-ranges";

const plan = (thresholds: string) => `name: t
target: { url: ws://127.0.0.1:9001/echo, protocol: ws }
connections: { count: 1, rate: 1 }
scenario:
  kind: echo
  message: { rate: 1 }
thresholds: ${thresholds}
`;

describe("planIssueRanges", () => {
  it("underlines a misspelled threshold metric where it is written, with the schema's message", () => {
    const text = plan('[ "latency.p95 < 200ms", "latncy.p95 < 200ms" ]');
    const parsed = parsePlanDocument(text);
    expect(parsed.ok).toBe(false);
    const ranges = planIssueRanges(text, parsed.ok ? [] : parsed.issues);
    const threshold = ranges.find((r) => text.slice(r.from, r.to).includes("latncy"));
    expect(threshold?.message).toMatch(/unknown metric "latncy.p95" \(did you mean "latency.p95"\?\)/);
    expect(text.slice(threshold!.from, threshold!.to)).toBe('"latncy.p95 < 200ms"');
  });

  it("marks the enclosing field's line when a required field is missing", () => {
    const text = plan("[]");
    const parsed = parsePlanDocument(text);
    const ranges = planIssueRanges(text, parsed.ok ? [] : parsed.issues);
    const missing = ranges.find((r) => r.message.startsWith("scenario.duration"));
    expect(missing).toBeDefined();
    expect(text.slice(missing!.from, missing!.to)).toBe("kind: echo");
  });
});
