import { afterEach, describe, expect, it } from "vitest";
import { decodeHistogram, IntervalRecorder } from "@volley/metrics";
import { ShardFrames } from "./shard-frames";
import type { EngineFrame } from "./types";

const turn = () => new Promise<void>((r) => setImmediate(r));

describe("ShardFrames", () => {
  let frames: ShardFrames | undefined;
  afterEach(() => frames?.stop());

  function setup() {
    const recorder = new IntervalRecorder();
    const got: EngineFrame[] = [];
    frames = new ShardFrames(recorder, { startAt: 1_000_000, onFrame: (f) => got.push(f) }, 0, undefined, undefined);
    frames.begin(0);
    frames.started();
    return { recorder, got, frames };
  }

  it("cuts at the boundary but hands the frame over only after encoding it in later event-loop turns", async () => {
    const { recorder, got, frames } = setup();
    for (const v of [1_000, 2_000, 3_000]) recorder.recordMicros("message.latency", v);
    recorder.recordMicros("message.send_lag", 10);
    recorder.increment("messages.sent", 3);
    frames.emit({ active: 5, endUs: 10_000_000 });

    // Nothing handed over inside the call that cut it: the sends due now go first.
    expect(got).toHaveLength(0);
    expect(frames.index).toBe(1);
    // Recorded after the cut belongs to the next interval, not this frame.
    recorder.recordMicros("message.latency", 900_000);

    for (let i = 0; i < 5 && got.length === 0; i++) await turn();
    expect(got).toHaveLength(1);
    const f = got[0]!;
    expect(f.index).toBe(0);
    expect(f.counters).toMatchObject({ "messages.sent": 3, "connections.active": 5 });
    expect(Object.keys(f.histograms).sort()).toEqual(["message.latency", "message.send_lag"]);
    const latency = decodeHistogram(f.histograms["message.latency"]!);
    expect(latency.totalCount).toBe(3);
    expect(latency.maxValue).toBeLessThan(3_100);
  });

  it("the final frame hands over every pending frame first, in order, at once", () => {
    const { recorder, got, frames } = setup();
    recorder.recordMicros("message.latency", 1_000);
    frames.emit({ active: 1, endUs: 1_500_000 });
    recorder.recordMicros("message.latency", 2_000);
    recorder.recordMicros("message.latency", 2_000);
    frames.emit({ active: 1, endUs: 1_500_000 }, 1_500_000);

    expect(got.map((f) => [f.index, decodeHistogram(f.histograms["message.latency"]!).totalCount])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(got[1]!.durationMs).toBe(500);
  });

  it("stop() delivers a frame still being encoded", () => {
    const { recorder, got, frames } = setup();
    recorder.recordMicros("message.latency", 1_000);
    frames.emit({ active: 1, endUs: 5_000_000 });
    frames.stop();
    expect(got).toHaveLength(1);
    expect(decodeHistogram(got[0]!.histograms["message.latency"]!).totalCount).toBe(1);
  });
});
