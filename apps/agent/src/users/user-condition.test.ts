import { describe, expect, it } from "vitest";
import { userConditionSchema, type TemplateContext } from "@volley/contracts";
import { compileCondition } from "./user-condition";

const ctx = (vars: Record<string, unknown>, data?: Record<string, unknown>): TemplateContext => ({
  connIndex: 0,
  connRoom: undefined,
  msgId: "0.0.0",
  msgSeq: 0,
  data,
  vars,
});
const holds = (condition: unknown, vars: Record<string, unknown>, data?: Record<string, unknown>) =>
  compileCondition(userConditionSchema.parse(condition))(ctx(vars, data));

describe("a user's condition", () => {
  it("compares numbers, and is false for a value that is not a number", () => {
    expect(holds({ var: "vars.n", below: 3 }, { n: 2 })).toBe(true);
    expect(holds({ var: "vars.n", below: 3 }, { n: 3 })).toBe(false);
    expect(holds({ var: "vars.n", atMost: 3 }, { n: 3 })).toBe(true);
    expect(holds({ var: "vars.n", above: 3 }, { n: 3 })).toBe(false);
    expect(holds({ var: "vars.n", atLeast: 3 }, { n: 3 })).toBe(true);
    // A CSV column or a text field holding a number compares as that number.
    expect(holds({ var: "data.limit", above: 9 }, {}, { limit: "10" })).toBe(true);
    for (const n of ["ten", "", true, null, undefined, { v: 1 }, [1]]) {
      expect(holds({ var: "vars.n", below: 100 }, { n })).toBe(false);
      expect(holds({ var: "vars.n", atLeast: -100 }, { n })).toBe(false);
    }
  });

  it("notEquals holds for another value or none; matches and in need the value set", () => {
    expect(holds({ var: "vars.s", notEquals: "done" }, { s: "open" })).toBe(true);
    expect(holds({ var: "vars.s", notEquals: "done" }, {})).toBe(true);
    expect(holds({ var: "vars.s", notEquals: "done" }, { s: "done" })).toBe(false);
    expect(holds({ var: "vars.o.id", matches: "^ord-\\d+$" }, { o: { id: "ord-12" } })).toBe(true);
    expect(holds({ var: "vars.o.id", matches: "^ord-\\d+$" }, { o: { id: "ord-x" } })).toBe(false);
    expect(holds({ var: "vars.o.id", matches: "." }, {})).toBe(false);
    expect(holds({ var: "vars.s", in: ["open", 2] }, { s: "open" })).toBe(true);
    expect(holds({ var: "vars.s", in: ["open", 2] }, { s: 2 })).toBe(true);
    expect(holds({ var: "vars.s", in: ["open", 2] }, { s: "shipped" })).toBe(false);
    expect(holds({ var: "vars.s", in: ["open"] }, {})).toBe(false);
  });

  it("keeps equals and `only set` as they were", () => {
    expect(holds({ var: "vars.n", equals: 2 }, { n: "2" })).toBe(true);
    expect(holds({ var: "vars.n", equals: "open" }, { n: "closed" })).toBe(false);
    expect(holds({ var: "vars.n" }, { n: 0 })).toBe(true);
    expect(holds({ var: "vars.n" }, { n: "" })).toBe(false);
    expect(holds({ var: "vars.n" }, {})).toBe(false);
  });
});
