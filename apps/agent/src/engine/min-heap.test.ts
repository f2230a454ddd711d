import { describe, expect, it } from "vitest";
import { MinHeap } from "./min-heap";

describe("min heap", () => {
  it("pops ids in key order", () => {
    const h = new MinHeap();
    const keys = Array.from({ length: 500 }, (_, i) => (i * 7919) % 1000);
    keys.forEach((k, id) => {
      h.push(id, k);
    });
    const out: number[] = [];
    while (h.size) {
      out.push(h.peekKey());
      h.pop();
    }
    expect(out).toEqual([...keys].sort((a, b) => a - b));
    expect(h.pop()).toBeUndefined();
    expect(h.peekKey()).toBe(Infinity);
  });
});
