import { describe, expect, it } from "vitest";
import { estimateClockOffset } from "./clock-sync";

describe("clock offset estimate", () => {
  it("keeps the minimum-RTT sample", async () => {
    // A fake local clock: each exchange takes `rtts[i]` ms; the hub is 1000 ms ahead and answers at the midpoint,
    // except the slow samples, which it answers late (asymmetric queueing).
    let local = 0;
    const rtts = [40, 6, 30, 2, 50];
    let i = 0;
    const ask = async () => {
      const rtt = rtts[i++]!;
      const hubAnswer = local + 1000 + (rtt > 10 ? rtt * 0.9 : rtt / 2);
      local += rtt;
      return hubAnswer;
    };
    const est = await estimateClockOffset(ask, rtts.length, () => local);
    expect(est).toEqual({ offsetMs: 1000, rttMs: 2 });
  });

  it("survives failed exchanges", async () => {
    let n = 0;
    const est = await estimateClockOffset(async () => {
      if (n++ % 2 === 0) throw new Error("timeout");
      return Date.now() + 50;
    }, 4);
    expect(est?.offsetMs).toBeGreaterThan(45);
    expect(est?.offsetMs).toBeLessThan(55);
    expect(await estimateClockOffset(() => Promise.reject(new Error("down")), 3)).toBeUndefined();
  });
});
