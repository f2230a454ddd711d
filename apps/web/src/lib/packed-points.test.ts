import type { IntervalPoint } from "@volley/contracts";
import { describe, expect, it } from "vitest";
import { packedPointsJson, packPoints, unpackPoints } from "./packed-points";

const point = (i: number, extra: Partial<IntervalPoint> = {}): IntervalPoint => ({
  index: i,
  t: 1_795_000_000_000 + i * 1000,
  warmup: i < 5,
  saturated: i % 7 === 0,
  connections: 5000,
  sent: 50_000 + i,
  received: 49_990 + i,
  errors: i % 3,
  lost: i % 2,
  disconnects: 0,
  connectFailed: 0,
  health: { cpu: 31.5, eventLoopMs: 1.25, sendLagMs: 0.75, agents: 100 },
  p50: i === 3 ? null : 1.234567,
  p95: 12.5,
  p99: 20.125,
  max: 31.0078125,
  ...extra,
});

describe("packPoints", () => {
  it("round-trips a timeline exactly, optional fields included only where they were", () => {
    const points = [
      point(0),
      point(1, { stage: 0 }),
      point(2, { stage: 1, step: 2, delivery: { received: 10, lost: 1, p50: null, p95: 3.5, p99: 4 } }),
      point(3),
      // A gap in the seconds and a stamp off the one-second grid.
      point(7, { t: 1_795_000_007_003 }),
    ];
    const back = unpackPoints(JSON.parse(packedPointsJson(points)));
    expect(back).toStrictEqual(points);
  });

  it("leaves out the columns no point has, and is much smaller than the objects", () => {
    const points = Array.from({ length: 3600 }, (_, i) => point(i));
    const packed = packPoints(points);
    expect(packed.delivery).toBeUndefined();
    expect(packed.stage).toBeUndefined();
    expect(JSON.stringify(packed).length).toBeLessThan(JSON.stringify(points).length / 2);
    expect(unpackPoints(packed)).toStrictEqual(points);
  });
});
