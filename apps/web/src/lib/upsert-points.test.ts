import { describe, expect, it } from "vitest";
import type { IntervalPoint } from "@volley/contracts";
import { upsertPoints } from "./upsert-points";

const pt = (index: number, sent = 1): IntervalPoint => ({
  index,
  t: index * 1000,
  warmup: false,
  saturated: false,
  connections: 1,
  sent,
  received: sent,
  errors: 0,
  lost: 0,
  disconnects: 0,
  connectFailed: 0,
  health: { cpu: 1, eventLoopMs: 1, sendLagMs: 0, agents: 1 },
  p50: 1,
  p95: 2,
  p99: 3,
  max: 4,
});

describe("upsertPoints", () => {
  it("appends new seconds, replaces re-sent ones and keeps the list sorted", () => {
    const a = upsertPoints([pt(0), pt(1)], [pt(3), pt(2)]);
    expect(a.map((p) => p.index)).toEqual([0, 1, 2, 3]);
    const b = upsertPoints(a, [pt(1, 9), pt(4)]);
    expect(b.map((p) => [p.index, p.sent])).toEqual([
      [0, 1],
      [1, 9],
      [2, 1],
      [3, 1],
      [4, 1],
    ]);
    expect(upsertPoints(b, [])).toBe(b);
  });
});
