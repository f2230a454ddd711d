import { HISTOGRAMS, type SpectrumPoint } from "@volley/contracts";
import { describe, expect, it } from "vitest";
import { spectrumKinds } from "./spectrum-axis";

const points = (ms: number): SpectrumPoint[] => [
  { percentile: 50, ms, count: 5 },
  { percentile: 100, ms: ms * 2, count: 10 },
];

describe("spectrumKinds", () => {
  it("hides a users run's user time (seconds) so the round trips in ms are not flattened onto zero", () => {
    const kinds = spectrumKinds({
      [HISTOGRAMS.userTime]: points(2_400),
      [HISTOGRAMS.messageLatency]: points(3),
      "step.chat": points(4),
      [HISTOGRAMS.connect]: points(6),
    });
    expect(kinds.map((k) => [k.label, k.hidden ?? false])).toEqual([
      ["round trip", false],
      ["connect", false],
      ["user time", true],
      ["step.chat", false],
    ]);
  });

  it("names delivery latency and first message, and leaves empty kinds out", () => {
    const kinds = spectrumKinds({ [HISTOGRAMS.deliveryLatency]: points(8), [HISTOGRAMS.firstMessage]: points(9), [HISTOGRAMS.sendLag]: [] });
    expect(kinds.map((k) => k.label)).toEqual(["delivery", "first message"]);
  });
});
