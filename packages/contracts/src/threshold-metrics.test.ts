import { describe, expect, it } from "vitest";
import { parseThreshold, THRESHOLD_OP_TESTS, THRESHOLD_OPS } from "./threshold-metrics";

describe("threshold grammar", () => {
  it("parses every operator of the one table, the two-character ones whole", () => {
    for (const op of THRESHOLD_OPS) expect(parseThreshold(`latency.p95 ${op} 200ms`)).toEqual({ ok: true, metric: "latency.p95", op, limit: 200, unit: "ms" });
    expect(parseThreshold("errors.rate<=1%")).toMatchObject({ ok: true, op: "<=", limit: 1 });
    expect(parseThreshold("latency.p95 =< 200ms")).toMatchObject({ ok: false });
  });

  it("judges a value against the limit with the operator's own test", () => {
    expect([200, 199].map((v) => THRESHOLD_OP_TESTS["<"](v, 200))).toEqual([false, true]);
    expect([200, 201].map((v) => THRESHOLD_OP_TESTS["<="](v, 200))).toEqual([true, false]);
    expect(THRESHOLD_OP_TESTS["=="](0, 0)).toBe(true);
  });
});
