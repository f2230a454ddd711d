import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { describe, expect, it } from "vitest";
import { IntervalRecorder } from "./interval-recorder";
import { reconnectStorms } from "./reconnect-storms";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

/** One shard's second of a connection scenario: opens, closes (drops among them), reconnects with their times in ms. */
function second(index: number, s: { opened?: number; dropped?: number; reconnects?: number[]; failed?: number }) {
  const r = new IntervalRecorder();
  r.increment(COUNTERS.connectionsOpened, s.opened ?? 0);
  r.increment(COUNTERS.connectionsClosed, s.dropped ?? 0);
  r.increment(COUNTERS.connectionsDropped, s.dropped ?? 0);
  r.increment(COUNTERS.reconnects, s.reconnects?.length ?? 0);
  r.increment(COUNTERS.reconnectsFailed, s.failed ?? 0);
  for (const ms of s.reconnects ?? []) r.recordMicros(HISTOGRAMS.reconnectTime, ms * 1000);
  return { index, startedAt: 1_000_000 + index * 1000, durationMs: 1000, warmup: false, ...r.take(), health };
}

describe("reconnect storms", () => {
  it("splits bursts of drops into storms, each counting its reconnects until the next; a share never back is null", () => {
    const frames = [
      second(0, { opened: 10 }),
      // Storm 1: 10 dropped over two seconds, 9 back (the slowest after 2.5 s), one gave up.
      second(1, { dropped: 6, reconnects: [100, 200, 300] }),
      second(2, { dropped: 4, reconnects: [400, 500, 600] }),
      second(3, { reconnects: [700, 800, 2500], failed: 1 }),
      // Storm 2: all 9 dropped, only 4 back before the run ends.
      second(4, { dropped: 9 }),
      second(5, { reconnects: [1000, 1100, 1200, 1300] }),
    ];
    const storms = reconnectStorms(frames)!;
    expect(storms.map((s) => [s.index, s.seconds, s.dropped, s.reconnected, s.failed, s.connectedBefore, s.connectedLowest, s.connected])).toEqual([
      [1, 2, 10, 9, 1, 10, 6, [7, 6, 9]],
      [4, 1, 9, 4, 0, 9, 0, [0, 4]],
    ]);
    // 5 of 10 back: the 5th fastest (500 ms); 9 of 10: the 9th (2.5 s); 99 %: 10 of 10, never.
    // (HdrHistogram values, 3 significant digits: within 0.1 %.)
    const { p50, p90, p99 } = storms[0]!.back;
    expect([Math.round(p50! / 10) * 10, Math.round(p90! / 10) * 10, p99]).toEqual([500, 2500, null]);
    expect(storms[0]!.startedAt).toBe(1_001_000);
    // 5 of 9 needed for half: only 4 came back.
    expect(storms[1]!.back).toEqual({ p50: null, p90: null, p99: null });
  });

  it("none without reconnects", () => {
    expect(reconnectStorms([second(0, { opened: 3 }), second(1, { dropped: 3 })])).toBeUndefined();
  });
});
