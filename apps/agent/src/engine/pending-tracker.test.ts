import { describe, expect, it } from "vitest";
import { PendingTracker, REPLY } from "./pending-tracker";

describe("pending tracker", () => {
  it("resolves once, then calls the second reply a duplicate", () => {
    const t = new PendingTracker(1000);
    t.add(0, 0, 50);
    expect(t.resolve(0, 0)).toBe(50);
    expect(t.resolve(0, 0)).toBe(REPLY.duplicate);
    expect(t.resolve(0, 7)).toBe(REPLY.unknown);
    expect(t.outstanding).toBe(0);
  });

  it("expires in deadline order and ignores a late reply", () => {
    const t = new PendingTracker(100);
    for (let i = 0; i < 5000; i++) t.add(i % 3, Math.floor(i / 3), i); // forces the ring to grow
    expect(t.resolve(1, 0)).toBe(1);
    expect(t.nextDeadline()).toBe(100);
    expect(t.expire(102)).toBe(2); // seqs at 0 and 2 (1 was answered)
    expect(t.resolve(0, 0)).toBe(REPLY.late);
    expect(t.expire(Infinity)).toBe(5000 - 3);
    expect(t.outstanding).toBe(0);
    expect(t.nextDeadline()).toBe(Infinity);
  });

  it("counts a closed connection's messages lost", () => {
    const t = new PendingTracker(100);
    t.add(3, 0, 1);
    t.add(3, 1, 2);
    t.add(4, 0, 3);
    expect(t.abandonConnection(3)).toBe(2);
    expect(t.resolve(3, 1)).toBe(REPLY.late);
    expect(t.expire(Infinity)).toBe(1);
  });
});
