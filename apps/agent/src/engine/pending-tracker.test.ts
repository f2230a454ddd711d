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

  it("keeps thousands in flight on one connection, answered out of order, with every old seq told apart", () => {
    const t = new PendingTracker(1_000_000);
    for (let seq = 0; seq < 3000; seq++) t.add(7, seq, 10 + seq);
    expect(t.outstandingFor(7)).toBe(3000);
    for (let seq = 2999; seq >= 0; seq -= 2) expect(t.resolve(7, seq)).toBe(10 + seq);
    expect(t.outstandingFor(7)).toBe(1500);
    const awaited: number[] = [];
    t.forEachAwaited((intended) => awaited.push(intended));
    expect(awaited).toEqual(Array.from({ length: 1500 }, (_, k) => 10 + 2 * k));
    for (let seq = 0; seq < 3000; seq += 2) expect(t.resolve(7, seq)).toBe(10 + seq);
    expect(t.outstanding).toBe(0);
    // Answered seqs stay duplicates once newer messages are in flight, never a newer message's time.
    for (let seq = 3000; seq < 3010; seq++) t.add(7, seq, 10 + seq);
    expect(t.resolve(7, 0)).toBe(REPLY.duplicate);
    expect(t.resolve(7, 2998)).toBe(REPLY.duplicate);
    expect(t.resolve(7, 3004)).toBe(3014);
    expect(t.resolve(7, 3010)).toBe(REPLY.unknown);
    expect(t.resolve(7, 1.5)).toBe(REPLY.unknown);
    expect(t.resolve(7, -1)).toBe(REPLY.unknown);
    expect(t.nextDeadline()).toBe(3010 + 1_000_000);
  });

  it("counts lost, late and duplicate apart when a connection's oldest messages expire under newer answered ones", () => {
    const t = new PendingTracker(100);
    for (let seq = 0; seq < 10; seq++) t.add(1, seq, seq * 10);
    for (let seq = 5; seq < 10; seq++) t.resolve(1, seq);
    expect(t.expire(125)).toBe(3); // seqs 0-2: deadlines 100, 110, 120
    expect(t.resolve(1, 1)).toBe(REPLY.late);
    expect(t.resolve(1, 6)).toBe(REPLY.duplicate);
    expect(t.resolve(1, 3)).toBe(30);
    expect(t.abandonConnection(1)).toBe(1); // seq 4
    expect(t.resolve(1, 4)).toBe(REPLY.late);
    expect(t.outstanding).toBe(0);
    expect(t.expire(Infinity)).toBe(0);
  });
});
