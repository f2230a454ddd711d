import { describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { compileCaptures } from "./http-step";

describe("captures", () => {
  it("pick: random captures one item of the list, every item drawn, and finds nothing in what is not a list", () => {
    const capture = compileCaptures({ movie: { json: "$.movies", pick: "random" } });
    const movies = [{ id: 1 }, { id: 2 }, { id: 3 }];
    const seen = new Set<unknown>();
    for (let i = 0; i < 300; i++) {
      const vars: Record<string, unknown> = {};
      expect(capture(vars, { json: { movies } })).toBeUndefined();
      expect(movies).toContain(vars.movie);
      seen.add(vars.movie);
    }
    expect(seen.size).toBe(3);
    // The name of the capture that found nothing comes back: the step fails naming it.
    expect(capture({}, { json: { movies: [] } })).toBe("movie");
    expect(capture({}, { json: { movies: { id: 1 } } })).toBe("movie");
  });

  it("a pick other than random is refused naming the field", () => {
    const plan = {
      name: "p",
      target: { url: "ws://127.0.0.1:9/x" },
      scenario: { kind: "users", arrivalRate: 1, duration: "1s" },
      flow: { steps: [{ request: { name: "list", method: "GET", url: "/movies", capture: { movie: { json: "$", pick: "first" } } } }] },
    };
    const r = planSchema.safeParse(plan);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain('pick is \\"random\\"');
  });
});
