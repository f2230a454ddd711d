import type { RunSummary } from "@volley/contracts";
import { describe, expect, it } from "vitest";
import { COMPARE_METRICS, deltaOf, fmtDelta, fmtRel } from "./run-deltas";

const lat = (p95: number) => ({ count: 10, min: 1, mean: 1, p50: p95 / 2, p90: p95, p95, p99: p95, max: p95 });
const summary = (p95: number, receiveRate: number, errors = 0): RunSummary => ({
  messages: { sent: 1000, received: 1000, lost: 0, duplicated: 0, outOfOrder: 0, sendRate: receiveRate, receiveRate },
  latency: lat(p95),
  sendLag: lat(1),
  connect: { opened: 0, failed: 0, latency: lat(1) },
  errors: errors ? { timeout: errors } : {},
  intervals: { measured: 1, warmup: 0, saturated: 0 },
  thresholds: [],
});
const m = (key: string) => COMPARE_METRICS.find((x) => x.key === key)!;

describe("run deltas", () => {
  it("judge by direction: higher latency and lower throughput are worse, the opposite better", () => {
    expect(deltaOf(m("p95"), summary(20, 100), summary(30, 100))).toMatchObject({ abs: 10, rel: 50, verdict: "worse" });
    expect(deltaOf(m("p95"), summary(20, 100), summary(10, 100))).toMatchObject({ abs: -10, rel: -50, verdict: "better" });
    expect(deltaOf(m("receiveRate"), summary(20, 100), summary(20, 50))).toMatchObject({ abs: -50, verdict: "worse" });
    expect(deltaOf(m("receiveRate"), summary(20, 100), summary(20, 150))).toMatchObject({ abs: 50, verdict: "better" });
    expect(deltaOf(m("errorRate"), summary(20, 100), summary(20, 100, 10))).toMatchObject({ base: 0, value: 1, rel: null, verdict: "worse" });
  });

  it("call changes within the tolerance or under the noise floor the same, and missing values n/a", () => {
    expect(deltaOf(m("p95"), summary(20, 100), summary(21, 100)).verdict).toBe("same"); // +5% < 10%
    expect(deltaOf(m("p95"), summary(20, 100), summary(21, 100), 0).verdict).toBe("worse"); // the compare table colours every change
    expect(deltaOf(m("p95"), summary(0.4, 100), summary(0.8, 100), 0).verdict).toBe("same"); // +100% but 0.4 ms
    expect(deltaOf(m("capacity"), summary(20, 100), summary(20, 100)).verdict).toBe("n/a");
    expect(deltaOf(m("p95"), null, summary(20, 100))).toMatchObject({ base: null, abs: null, verdict: "n/a" });
  });

  it("format signed deltas in the metric's unit", () => {
    expect(fmtDelta(m("p95"), 12.5)).toBe("+12.5 ms");
    expect(fmtDelta(m("receiveRate"), -3)).toBe("−3/s");
    expect(fmtRel(-12.34)).toBe("−12.3%");
    expect(fmtRel(null)).toBe("—");
  });
});
