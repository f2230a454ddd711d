import { describe, expect, it } from "vitest";
import { createArrival } from "./arrival";
import { SendSchedule } from "./send-schedule";
import { SendTurn, type SlotSink } from "./send-turn";

/** A sink that sends everything handed to it, in one unhurried turn. */
function sink(): SlotSink {
  const turn = new SendTurn(() => 0, 1_000_000);
  turn.begin(0);
  return { isOpen: () => true, send: () => {}, shed: () => {}, turn };
}

describe("SendSchedule.afterNextDue", () => {
  it("per connection: the second earliest slot across connections, which is what comes due after the next", () => {
    const s = new SendSchedule(true, createArrival("constant", 10));
    // Three connections 10/s each, opened 10, 30 and 70 ms in: slots every 100 ms from each open.
    s.open(0, 10_000);
    s.open(1, 30_000);
    s.open(2, 70_000);
    const out = sink();
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      const next = s.nextDue();
      const after = s.afterNextDue();
      s.due(next, out);
      expect(s.nextDue()).toBe(after);
      seen.push(next);
    }
    expect(seen).toEqual([10_000, 30_000, 70_000, 110_000, 130_000, 170_000, 210_000, 230_000]);
  });

  it("aggregate, constant arrival: the slot after the next on the one schedule", () => {
    const s = new SendSchedule(false, createArrival("constant", 1000));
    s.open(0, 5_000);
    s.open(1, 5_100);
    expect(s.nextDue()).toBe(5_000);
    expect(s.afterNextDue()).toBe(6_000);
    s.due(5_000, sink());
    expect(s.nextDue()).toBe(6_000);
    expect(s.afterNextDue()).toBe(7_000);
  });

  it("aggregate, Poisson: no prediction (the next gap is not drawn until it is due)", () => {
    const s = new SendSchedule(
      false,
      createArrival("poisson", 1000, () => 0.5),
    );
    s.open(0, 5_000);
    expect(s.nextDue()).toBe(5_000);
    expect(s.afterNextDue()).toBe(Infinity);
  });
});
