import { describe, expect, it } from "vitest";
import { DELIVERY, DeliveryTracker } from "./delivery-tracker";

const out = () => ({ extra: false, outOfOrder: false });

describe("delivery tracker", () => {
  it("expects the other members open at send time, and times each delivery once", () => {
    const t = new DeliveryTracker(1000);
    for (const id of [0, 1, 2]) t.join(id, "r");
    t.join(3, "other");
    expect(t.sent(0, 0, 100)).toBe(2);
    expect(t.outstanding).toBe(2);
    const o = out();
    expect(t.deliver(1, 0, 0, o)).toBe(100);
    expect(t.deliver(1, 0, 0, o)).toBe(DELIVERY.duplicate);
    expect(t.deliver(2, 0, 0, o)).toBe(100);
    expect(t.outstanding).toBe(0);
    // Fully delivered and forgotten: another copy is a duplicate, a seq never sent is unknown.
    expect(t.deliver(2, 0, 0, o)).toBe(DELIVERY.duplicate);
    expect(t.deliver(2, 0, 5, o)).toBe(DELIVERY.unknown);
    expect(t.sent(3, 0, 100)).toBe(0); // alone in its room
  });

  it("a member that leaves loses exactly what it awaited; one that joins later expects only later messages", () => {
    const t = new DeliveryTracker(1000);
    for (const id of [0, 1, 2]) t.join(id, "r");
    t.sent(0, 0, 100);
    t.sent(0, 1, 110);
    t.deliver(2, 0, 0, out());
    expect(t.leave(2)).toBe(1); // seq 1 only
    expect(t.deliver(2, 0, 1, out())).toBe(DELIVERY.late);
    t.join(3, "r");
    expect(t.sent(1, 0, 120)).toBe(2); // 0 and 3, not 2
    // Seq 1 was sent before 3 joined: its copy to 3 was never expected, whatever the server did.
    const o = out();
    expect(t.deliver(3, 0, 1, o)).toBe(DELIVERY.lateJoiner);
    expect(o.extra).toBe(false);
  });

  it("a copy to a member that joined after the send is a late joiner's, not a duplicate, before or after the expected copies are in", () => {
    const t = new DeliveryTracker(1000);
    t.join(0, "r");
    t.join(1, "r");
    expect(t.sent(0, 0, 100)).toBe(1);
    const tick0 = t.lastTick;
    expect(t.sent(0, 1, 110)).toBe(1);
    const tick1 = t.lastTick;
    t.join(2, "r");
    // Seq 0: member 1's copy is in first, so the message is settled and forgotten.
    expect(t.deliver(1, 0, 0, out(), tick0)).toBe(100);
    expect(t.outstanding).toBe(1);
    expect(t.deliver(2, 0, 0, out(), tick0)).toBe(DELIVERY.lateJoiner);
    // Seq 1: the late joiner's copy comes while member 1's is still awaited.
    expect(t.deliver(2, 0, 1, out(), tick1)).toBe(DELIVERY.lateJoiner);
    expect(t.outstanding).toBe(1);
    expect(t.deliver(1, 0, 1, out(), tick1)).toBe(110);
    expect(t.outstanding).toBe(0);
    // A second copy to a member that was there is still a duplicate; later messages expect member 2.
    expect(t.deliver(1, 0, 0, out(), tick0)).toBe(DELIVERY.duplicate);
    expect(t.sent(1, 0, 120)).toBe(2);
    expect(t.deliver(2, 1, 0, out(), t.lastTick)).toBe(120);
  });

  it("flows (pre-join copies): a copy to a member Volley counted in after the send is timed as an extra expectation", () => {
    const t = new DeliveryTracker(1000);
    t.preJoin = true;
    t.join(0, "r");
    t.join(1, "r");
    t.sent(0, 0, 100);
    t.join(2, "r");
    const o = out();
    expect(t.deliver(2, 0, 0, o)).toBe(100);
    expect(o.extra).toBe(true);
  });

  it("counts deliveries past the deadline lost once, then a late copy is late; abandonAll loses the rest", () => {
    const t = new DeliveryTracker(1000);
    for (const id of [0, 1, 2]) t.join(id, "r");
    t.sent(0, 0, 100);
    t.sent(1, 0, 500);
    expect(t.nextDeadline()).toBe(1100);
    t.deliver(1, 0, 0, out());
    expect(t.expire(1100)).toBe(1);
    expect(t.deliver(2, 0, 0, out())).toBe(DELIVERY.late);
    expect(t.nextDeadline()).toBe(1500);
    expect(t.abandonAll()).toBe(2);
    expect(t.outstanding).toBe(0);
    expect(t.nextDeadline()).toBe(Infinity);
  });

  it("flags a delivery older than one already received from the same sender", () => {
    const t = new DeliveryTracker(1000);
    t.join(0, "r");
    t.join(1, "r");
    t.sent(0, 0, 100);
    t.sent(0, 1, 110);
    const o = out();
    t.deliver(1, 0, 1, o);
    expect(o.outOfOrder).toBe(false);
    t.deliver(1, 0, 0, o);
    expect(o.outOfOrder).toBe(true);
  });

  it("a retiring member still awaits what was sent before, and neither expects nor times later messages", () => {
    const t = new DeliveryTracker(1000);
    for (const id of [0, 1, 2]) t.join(id, "r");
    t.sent(0, 0, 100);
    expect(t.outstandingFor(2)).toBe(1);
    t.retire(2);
    expect(t.sent(0, 1, 110)).toBe(1); // member 1 only
    expect(t.outstandingFor(2)).toBe(1);
    expect(t.deliver(2, 0, 1, out())).toBe(DELIVERY.retired);
    expect(t.deliver(2, 0, 0, out())).toBe(100);
    expect(t.outstandingFor(2)).toBe(0);
    expect(t.leave(2)).toBe(0);
    expect(t.outstandingFor(1)).toBe(2);
  });
});
