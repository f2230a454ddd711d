import { describe, expect, it } from "vitest";
import type { IntervalPoint, Run } from "@volley/contracts";
import { rateMarkers } from "./rate-markers";

const T0 = 1_796_000_000_000;
const run = (ats: number[]) =>
  ({ rateChanges: ats.map((at, i) => ({ at, scale: i + 2, rate: 5 * (i + 2), unit: "msg/s per connection", by: "a@example.com" })) }) as unknown as Run;
const intervals = [{ t: T0 }, { t: T0 + 1000 }, { t: T0 + 2000 }] as IntervalPoint[];

describe("rateMarkers", () => {
  it("puts a change at its second, and one made in the start lead (before the first second began) at the start, not off the chart", () => {
    const [lead, early, mid] = rateMarkers(run([T0 - 250, T0 + 200, T0 + 1500]), intervals);
    expect(lead).toEqual({ x: 0, label: "rate → 10 msg/s per connection (×2)" });
    expect(early!.x).toBe(0);
    expect(mid!.x).toBeCloseTo(1, 6);
  });
});
