import { describe, expect, it } from "vitest";
import { z } from "zod";
import { EXAMPLE_PLAN_YAML } from "./examples";
import { parsePlanDocument, validatePlan } from "./plan-document";
import { durationMs } from "./duration";
import { fieldIssues } from "./errors";
import { planSchema } from "./plan";
import { requiredFieldError } from "./required-field";

describe("plan documents", () => {
  it("accepts the example plan and fills defaults", () => {
    const r = parsePlanDocument(EXAMPLE_PLAN_YAML);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.plan.connections.count).toBe(50);
    expect(r.plan.target.connectTimeout).toBe("10s");
    expect(durationMs(r.plan.scenario.duration)).toBe(10_000);
  });

  it("says what a missing field is for, with an example, instead of zod's 'expected object, received undefined'", () => {
    const base = { name: "t", target: { url: "ws://127.0.0.1:9001/echo" }, connections: { count: 1 } };
    const r = validatePlan({ ...base, scenario: { kind: "echo", duration: "1s" } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues).toEqual([
      {
        path: "scenario.message",
        message:
          "required: the messages each connection sends, like message: { rate: 10 } (10 a second per connection; bytes, per, arrival and timeout have defaults)",
      },
    ]);
    // The example is valid as written.
    const fixed = parsePlanDocument(
      `name: t\ntarget: { url: ws://127.0.0.1:9001/echo }\nconnections: { count: 1 }\nscenario: { kind: echo, message: { rate: 10 }, duration: 1s }\n`,
    );
    expect(fixed.ok).toBe(true);

    const empty = validatePlan({});
    expect(empty.ok || empty.issues.map((i) => [i.path, i.message.split(",")[0]])).toEqual([
      ["name", "required: a name for the plan"],
      ["target", "required: the server to load"],
      ["connections", "required: how many connections to open"],
      ["scenario", "required: what the connections do"],
    ]);
    const noKind = validatePlan({ ...base, scenario: { message: { rate: 1 }, duration: "1s" } });
    expect(noKind.ok || noKind.issues).toEqual([
      { path: "scenario.kind", message: "required: what the connections do, like kind: echo (one of echo, broadcast, groups, storm, http-rps or users)" },
    ]);
    // Misspelled, not missing: the schema's own message, which lists the kinds.
    const typo = validatePlan({ ...base, scenario: { kind: "ecko", message: { rate: 1 }, duration: "1s" } });
    expect(typo.ok || typo.issues[0]?.message).toMatch(/^Invalid discriminator value\. Expected 'echo'/);
    // A field without an example of its own still says it is required, and what it takes.
    const stage = validatePlan({
      ...base,
      connections: { count: 1, stages: [{ duration: "1s" }] },
      scenario: { kind: "echo", message: { rate: 1 }, duration: "1s" },
    });
    expect(stage.ok || stage.issues).toEqual([{ path: "connections.stages.0.target", message: "required: a number" }]);
  });

  it("words missing fields the same under an API body's `plan`", () => {
    const body = z.strictObject({ plan: planSchema });
    const missing = body.safeParse({}, { error: requiredFieldError });
    expect(missing.error?.issues[0]?.message).toMatch(/^required: the test plan, like plan: \{ name: smoke, target: \{ url: ws:/);
    const noMessage = body.safeParse(
      { plan: { name: "t", target: { url: "ws://127.0.0.1:9001/echo" }, connections: { count: 1 }, scenario: { kind: "echo", duration: "1s" } } },
      { error: requiredFieldError },
    );
    expect(noMessage.error && fieldIssues(noMessage.error)).toEqual([
      { path: "plan.scenario.message", message: expect.stringMatching(/^required: the messages each connection sends, like message: \{ rate: 10 \}/) },
    ]);
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
