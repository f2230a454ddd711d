import { describe, expect, it } from "vitest";
import { usersScenarioSchema, type UsersScenario } from "@volley/contracts";
import { UserArrivals } from "./user-arrivals";

const scenario = (s: Record<string, unknown>): UsersScenario => usersScenarioSchema.parse({ kind: "users", ...s });
const all = (a: UserArrivals) => {
  const out: number[] = [];
  for (let t = a.next(); t !== Infinity && out.length < 100_000; t = a.next()) out.push(t);
  return out;
};

describe("user arrivals", () => {
  it("a constant rate: user k at k / rate, until duration", () => {
    const times = all(new UserArrivals(scenario({ arrivalRate: 10, duration: "2s" }), Math.random));
    expect(times).toHaveLength(20);
    expect(times.map((t) => Math.round(t))).toEqual(times.map((_, k) => k * 100_000));
  });

  it("a ramp brings the users its rates call for: 0 → 10/s over 2 s is 10 users, ever closer together", () => {
    const times = all(new UserArrivals(scenario({ arrivalRate: 0, duration: "2s", stages: [{ duration: "2s", target: 10 }] }), Math.random));
    expect(times).toHaveLength(10);
    // Expected arrivals by t are 2.5·t²: user k at √(k / 2.5) s.
    for (const [k, t] of times.entries()) expect(t / 1e6).toBeCloseTo(Math.sqrt(k / 2.5), 6);
  });

  it("steps and pauses (0 s stages), and the last target held until duration", () => {
    const stepped = all(
      new UserArrivals(
        scenario({
          arrivalRate: 1,
          duration: "2s",
          stages: [
            { duration: "0s", target: 10 },
            { duration: "1s", target: 10 },
          ],
        }),
        Math.random,
      ),
    );
    expect(stepped).toHaveLength(20);
    const paused = all(
      new UserArrivals(
        scenario({
          arrivalRate: 5,
          duration: "3s",
          stages: [
            { duration: "1s", target: 5 },
            { duration: "0s", target: 0 },
            { duration: "1s", target: 0 },
            { duration: "0s", target: 5 },
          ],
        }),
        Math.random,
      ),
    );
    expect(paused).toHaveLength(10);
    expect(paused.filter((t) => t >= 1e6 && t < 2e6)).toEqual([]);
  });

  it("Poisson arrivals average the rate's count", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const counts = Array.from({ length: 200 }, () => all(new UserArrivals(scenario({ arrivalRate: 50, arrival: "poisson", duration: "2s" }), random)).length);
    const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
    expect(mean).toBeGreaterThan(97);
    expect(mean).toBeLessThan(103);
  });
});
