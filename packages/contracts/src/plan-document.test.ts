import { describe, expect, it } from "vitest";
import { EXAMPLE_PLAN_YAML } from "./examples";
import { parsePlanDocument, validatePlan } from "./plan-document";
import { durationMs } from "./duration";

describe("plan documents", () => {
  it("accepts the example plan and fills defaults", () => {
    const r = parsePlanDocument(EXAMPLE_PLAN_YAML);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.plan.connections.count).toBe(50);
    expect(r.plan.target.connectTimeout).toBe("10s");
    expect(durationMs(r.plan.scenario.duration)).toBe(10_000);
  });

  it("names every offending field", () => {
    const r = validatePlan({
      name: "",
      target: { url: "ftp://x", protocol: "carrier-pigeon" },
      connections: { count: 0 },
      scenario: { kind: "echo", message: { rate: -1 }, duration: "ten seconds" },
      extra: 1,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const paths = r.issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining(["name", "target.url", "target.protocol", "connections.count", "scenario.message.rate", "scenario.duration", "(root)"]),
    );
  });

  it("reports YAML syntax errors as a document issue", () => {
    const r = parsePlanDocument("name: [unclosed");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0]?.path).toBe("(document)");
  });
});
