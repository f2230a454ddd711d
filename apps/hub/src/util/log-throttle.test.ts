import { describe, expect, it } from "vitest";
import { LogThrottle } from "./log-throttle";

describe("LogThrottle", () => {
  it("lets the first line of a key through, counts the rest of its window, and reports them with the next line", () => {
    const t = new LogThrottle(60_000, 3);
    expect(t.take("a", 0)).toEqual({ log: true, suppressed: 0 });
    for (let i = 1; i <= 500; i++) expect(t.take("a", i * 100).log).toBe(false);
    expect(t.take("b", 1_000)).toEqual({ log: true, suppressed: 0 });
    expect(t.take("a", 60_000)).toEqual({ log: true, suppressed: 500 });
    expect(t.take("a", 60_001)).toEqual({ log: false, suppressed: 0 });
  });

  it("holds no more than maxKeys keys: the oldest is forgotten and logs again", () => {
    const t = new LogThrottle(60_000, 2);
    t.take("a", 0);
    t.take("b", 0);
    t.take("c", 0);
    expect(t.take("a", 1)).toEqual({ log: true, suppressed: 0 });
    expect(t.take("c", 1).log).toBe(false);
  });
});
