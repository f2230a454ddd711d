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
      const sorted = h.size >= 2 ? out.length : -1;
      out.push(h.peekKey());
      if (sorted >= 0) expect(h.peekSecondKey()).toBe([...keys].sort((a, b) => a - b)[sorted + 1]);
      h.pop();
    }
    expect(out).toEqual([...keys].sort((a, b) => a - b));
    expect(h.pop()).toBeUndefined();
    expect(h.peekKey()).toBe(Infinity);
    h.push(1, 5);
    expect(h.peekSecondKey()).toBe(Infinity);
  });
});
