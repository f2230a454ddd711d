import { describe, expect, it } from "vitest";
import { COUNTERS, HISTOGRAMS, usersSummarySchema } from "@volley/contracts";
import { IntervalRecorder } from "./interval-recorder";
import { summarizeUsers } from "./users-summary";

function frame(warmup: boolean, fill: (r: IntervalRecorder) => void) {
  const r = new IntervalRecorder();
  fill(r);
  return { index: 0, warmup, ...r.take() };
}

describe("summarizeUsers", () => {
  it("gives each named connection its own opens, drops, reconnects and times, merged over frames; totals stay every connection's", () => {
    const frames = [
      frame(true, (r) => {
        r.increment(COUNTERS.usersStarted, 2);
        r.increment(COUNTERS.connectionsOpened, 4);
        r.increment(`${COUNTERS.connectionsOpened}.main`, 2);
        r.increment(`${COUNTERS.connectionsOpened}.feed`, 2);
        // Warm-up: counted, not timed, as every users time.
        r.recordMicros(`${HISTOGRAMS.connect}.feed`, 900_000);
      }),
      frame(false, (r) => {
        r.increment(COUNTERS.connectionsDropped, 1);
        r.increment(`${COUNTERS.connectionsDropped}.feed`, 1);
        r.increment(`${COUNTERS.reconnects}.feed`, 1);
        r.increment(`${COUNTERS.reconnectsFailed}.feed`, 1);
        r.recordMicros(`${HISTOGRAMS.connect}.feed`, 2_000);
        r.recordMicros(`${HISTOGRAMS.connect}.main`, 1_000);
        r.recordMicros(`${HISTOGRAMS.reconnectTime}.feed`, 5_000);
        r.recordMicros(HISTOGRAMS.connect, 1_500);
      }),
    ];
    const users = usersSummarySchema.parse(summarizeUsers(frames));
    const byName = Object.fromEntries(users.connections!.map((c) => [c.connection, c]));
    expect(Object.keys(byName).sort()).toEqual(["feed", "main"]);
    expect(byName.feed).toMatchObject({ opened: 2, dropped: 1, reconnected: 1, reconnectFailed: 1 });
    expect(byName.feed!.connect.count).toBe(1);
    expect(byName.feed!.connect.max).toBeCloseTo(2, 1);
    expect(byName.feed!.reconnect.count).toBe(1);
    expect(byName.main).toMatchObject({ opened: 2, dropped: 0, reconnected: 0, reconnectFailed: 0 });
    expect(byName.main!.connect.count).toBe(1);
    // The shard-wide connect time is no connection's own.
    expect(users.steps).toEqual([]);
  });

  it("leaves connections out when a user holds one", () => {
    const users = summarizeUsers([frame(false, (r) => r.increment(COUNTERS.usersStarted, 1))]);
    expect(users).toBeDefined();
    expect(users!.connections).toBeUndefined();
  });
});
