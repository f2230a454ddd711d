import { describe, expect, it } from "vitest";
import { decodeHistogram, encodeHistogram } from "./histogram";
import { IntervalRecorder } from "./interval-recorder";

describe("IntervalRecorder", () => {
  it("cut() hands over the interval's histograms and records the next interval into fresh ones", () => {
    const r = new IntervalRecorder();
    for (const v of [100, 200, 300]) r.recordMicros("message.latency", v);
    r.recordMicros("ws.connect", 5_000);
    r.increment("messages.sent", 3);
    r.setGauge("connections.active", 7);

    const first = r.cut();
    expect(first.counters).toEqual({ "messages.sent": 3, "connections.active": 7 });
    expect(first.histograms.map(([k, h]) => [k, h.totalCount])).toEqual([
      ["message.latency", 3],
      ["ws.connect", 1],
    ]);

    // Recorded after the cut: must not leak into the histograms already handed over.
    r.recordMicros("message.latency", 9_000);
    const [, latency] = first.histograms[0]!;
    expect(latency.totalCount).toBe(3);
    expect(latency.maxValue).toBeLessThan(400);

    const second = r.cut();
    // Counters reset, gauges stay; a histogram that recorded nothing is not handed over.
    expect(second.counters).toEqual({ "connections.active": 7 });
    expect(second.histograms.map(([k, h]) => [k, h.totalCount])).toEqual([["message.latency", 1]]);
  });

  it("release() recycles a handed-over histogram empty, and take() still encodes exactly", () => {
    const r = new IntervalRecorder();
    r.recordMicros("message.latency", 1_234);
    const { histograms } = r.cut();
    const [, h] = histograms[0]!;
    const encoded = encodeHistogram(h);
    r.release(h);
    expect(h.totalCount).toBe(0);

    // The released histogram is reused for the next swap; its old samples must be gone.
    r.recordMicros("message.latency", 50);
    r.cut();
    r.recordMicros("message.latency", 60);
    const body = r.take();
    const decoded = decodeHistogram(body.histograms["message.latency"]!);
    expect(decoded.totalCount).toBe(1);
    expect(decoded.maxValue).toBeLessThan(61);
    expect(decodeHistogram(encoded).totalCount).toBe(1);
  });
});
