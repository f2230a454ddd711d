import { describe, expect, it } from "vitest";
import { errorCount, errorsByClass } from "./error-counters";

describe("error counters", () => {
  it("sums every errors.<class> counter and nothing else, from a record or a map", () => {
    const c = { "messages.sent": 10, "errors.refused": 2, "errors.timeout": 3, "errors.setup.login": 1, "connections.failed": 5 };
    expect(errorCount(c)).toBe(6);
    expect(errorCount(new Map(Object.entries(c)))).toBe(6);
    expect(errorCount({})).toBe(0);
  });

  it("splits them by class, adding into a running total", () => {
    const into = errorsByClass({ "errors.refused": 2, "messages.sent": 1 });
    expect(errorsByClass({ "errors.refused": 1, "errors.setup.login": 4 }, into)).toEqual({ refused: 3, "setup.login": 4 });
  });
});
