import { describe, expect, it } from "vitest";
import { HISTOGRAMS, planSchema, type Run } from "@volley/contracts";
import { analyzeFrames, IntervalRecorder, mergeTimeline, summarizeRun, type FrameLike } from "@volley/metrics";
import { headlineCards } from "./headline-cards";
import { runReportHtml } from "./run-report";
import { svgChart } from "./svg-chart";

const health = { cpu: 20, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

/** A run of `seconds` one-second frames: 100 sent and answered in ~`ms` each, one close per second with its sample. */
function run(opts: { name?: string; thresholds?: string[]; seconds?: number; ms?: number; sweep?: boolean } = {}): {
  run: Run;
  intervals: ReturnType<typeof mergeTimeline>;
  frames: FrameLike[];
} {
  const plan = planSchema.parse({
    name: opts.name ?? "report",
    target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
    connections: { count: 10, rate: 10 },
    scenario: { kind: "echo", message: { rate: 10 }, duration: "5s" },
    thresholds: opts.thresholds ?? [],
  });
  const frames: FrameLike[] = Array.from({ length: opts.seconds ?? 5 }, (_, i) => {
    const r = new IntervalRecorder();
    r.increment("messages.sent", 100);
    r.increment("messages.received", 99);
    r.increment("messages.lost", 1);
    r.increment("connections.opened", i === 0 ? 10 : 0);
    r.increment("connections.active", 10);
    r.increment("errors.closed", 1);
    for (let n = 0; n < 99; n++) r.recordMicros(HISTOGRAMS.messageLatency, (opts.ms ?? 50) * 1000 + n * 100);
    return {
      index: i,
      startedAt: 1_000_000 + i * 1000,
      durationMs: 1000,
      warmup: false,
      ...r.take(),
      health,
      samples: [{ kind: "error" as const, event: "closed", data: "close 1011 (internal error): <b>overloaded</b>" }],
    };
  });
  const summary = summarizeRun(frames, plan.thresholds, plan);
  const r: Run = {
    id: "run_x",
    status: summary.thresholds.every((t) => t.ok) ? "passed" : "failed",
    reason: null,
    name: plan.name,
    plan,
    createdAt: "2026-11-25T03:00:00Z",
    startedAt: "2026-11-25T03:00:01Z",
    endedAt: "2026-11-25T03:00:07Z",
    summary,
  };
  return { run: r, intervals: mergeTimeline(frames), frames };
}

/**
 * A capacity search of three 1 s steps at 100, 200 and 300 msg/s: the first two answer in ~5 ms,
 * the third in ~400 ms and breaks the stop rule (p95 <= 200ms). Gaps between steps send nothing.
 */
function sweepRun(): { run: Run; intervals: ReturnType<typeof mergeTimeline> } {
  const plan = planSchema.parse({
    name: "capacity",
    target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
    connections: { count: 10, rate: 10 },
    scenario: { kind: "echo", message: { rate: 10, per: "aggregate" }, duration: "10s" },
    sweep: { from: 100, step: 100, steps: 3, hold: "1s", gap: "1s", stopWhen: { p95: "200ms" } },
  });
  const frames: FrameLike[] = [0, 1, 2].map((step) => {
    const rate = 100 * (step + 1);
    const r = new IntervalRecorder();
    r.increment("messages.sent", rate);
    r.increment("messages.received", rate);
    r.increment("connections.active", 10);
    for (let n = 0; n < rate; n++) r.recordMicros(HISTOGRAMS.messageLatency, (step === 2 ? 400 : 5) * 1000 + n * 10);
    return {
      index: 1 + 2 * step,
      startedAt: 1_000_000 + (1 + 2 * step) * 1000,
      durationMs: 1000,
      warmup: false,
      ...r.take(),
      health,
      step: { index: step, rate, per: "aggregate" as const },
    };
  });
  const summary = summarizeRun(frames, plan.thresholds, plan);
  const r: Run = {
    id: "run_sweep",
    status: "passed",
    reason: null,
    name: plan.name,
    plan,
    createdAt: "2026-11-25T03:00:00Z",
    startedAt: "2026-11-25T03:00:01Z",
    endedAt: "2026-11-25T03:00:08Z",
    summary,
  };
  return { run: r, intervals: mergeTimeline(frames) };
}

describe("headline cards", () => {
  it("give the run's figures and put each plan threshold on its card, judged", () => {
    const { run: r, intervals } = run({ thresholds: ["latency.p95 < 20ms", "errors.rate < 5%", "messages.loss_rate < 0.5%", "throughput.sent > 50"] });
    const cards = Object.fromEntries(headlineCards(r, intervals).map((c) => [c.key, c]));
    expect(cards.rate!.value).toBe("100/s");
    expect(cards.rate!.detail).toContain("peak 100/s sent");
    expect(cards.connections!.value).toBe("10");
    expect(cards.p95!.thresholds).toEqual([{ expression: "latency.p95 < 20ms", limit: 20, ok: false }]);
    expect(cards.p95!.tone).toBe("bad");
    expect(cards.errors!.thresholds[0]).toMatchObject({ limit: 5, ok: true });
    // 5 errors of 500 sent + 10 opened.
    expect(cards.errors!.value).toBe("0.98%");
    expect(cards.loss!.value).toBe("1.00%");
    expect(cards.loss!.thresholds[0]).toMatchObject({ limit: 0.5, ok: false });
    expect(cards.rate!.thresholds[0]).toMatchObject({ limit: 50, ok: true });
    // The running error rate ends at the run's own figure.
    expect(cards.errors!.series!.at(-1)).toBeCloseTo(100 * (5 / 510), 6);
    expect(cards.capacity).toBeUndefined();
  });

  it("shows a capacity that never broke as a lower bound", () => {
    const { run: r, intervals } = run();
    r.summary!.capacity = { slo: "p95 <= 200ms", rate: 20, per: "aggregate", sendRate: 19.8, deliveryRate: null, step: 2, lowerBound: true };
    const capacity = headlineCards(r, intervals).find((c) => c.key === "capacity")!;
    expect(capacity.value).toBe("≥ 20 msg/s");
    expect(capacity.detail).toContain("never broke");
  });

  it("says a capacity that ended at an agent-limited step is a lower bound, not that it never broke", () => {
    const { run: r, intervals } = run();
    r.summary!.capacity = {
      slo: "p95 <= 200ms",
      rate: 20,
      per: "aggregate",
      sendRate: 19.8,
      deliveryRate: null,
      step: 2,
      lowerBound: true,
      agentSaturated: true,
      endedBy: "the step at 30/s per aggregate was limited by the load generator, not the server (CPU 97% > 90%)",
    };
    const capacity = headlineCards(r, intervals).find((c) => c.key === "capacity")!;
    expect(capacity.value).toBe("≥ 20 msg/s");
    expect(capacity.detail).toContain("load generator");
    expect(capacity.detail).not.toContain("never broke");
  });

  it("says a search whose first step the agent limited found nothing, inconclusive, not 'unknown, a lower bound'", () => {
    const { run: r, intervals } = run();
    r.summary!.capacity = {
      slo: "p95 <= 200ms",
      rate: null,
      per: "aggregate",
      sendRate: null,
      deliveryRate: null,
      step: null,
      lowerBound: false,
      agentSaturated: true,
      endedBy: "the step at 10/s per aggregate was limited by the load generator, not the server (CPU 97% > 90%)",
    };
    const capacity = headlineCards(r, intervals).find((c) => c.key === "capacity")!;
    expect(capacity.value).toBe("not found");
    expect(capacity.detail).toMatch(/^inconclusive: no step could be judged/);
    expect(capacity.detail).not.toContain("lower bound");
    expect(capacity.tone).toBeUndefined();
  });
});

describe("svgChart", () => {
  it("breaks the line at missing values, draws thresholds and escapes every label", () => {
    const svg = svgChart({
      width: 100,
      height: 50,
      title: "a <b>",
      series: [{ label: "x", values: [1, 2, null, 4], color: "#000" }],
      thresholds: [{ value: 3, label: 'p95 < "3"', ok: false }],
      axes: true,
    });
    expect(svg.match(/M/g)).toHaveLength(2);
    expect(svg).toContain('data-threshold="p95 &lt; &quot;3&quot;"');
    expect(svg).toContain("a &lt;b&gt;");
    expect(svg).not.toContain("<b>");
  });

  it("draws an hour on a card from a few points per column, its spikes and dips kept", () => {
    const values = Array.from({ length: 3600 }, (_, i) => (i === 1234 ? 500 : i === 2345 ? 0 : 100 + (i % 7)));
    const svg = svgChart({ width: 220, height: 44, title: "p95", series: [{ label: "p95", values, color: "#000" }] });
    const d = svg.match(/ d="([^"]*)"/)![1]!;
    const ys = [...d.matchAll(/[ML][\d.]+ ([\d.]+)/g)].map((m) => Number(m[1]));
    expect(ys.length).toBeLessThanOrEqual(4 * 2 * 220);
    expect(ys.length).toBeGreaterThan(2 * 218);
    // y is drawn downwards: the spike (top is 1.1 × 500) is the smallest y, the dip to zero the bottom edge.
    expect(Math.min(...ys)).toBe(7.5);
    expect(Math.max(...ys)).toBe(42);
  });
});

describe("runReportHtml", () => {
  it("is one document with nothing to fetch: charts as inline SVG, cards, errors with their samples, thresholds, the plan", () => {
    const { run: r, intervals } = run({ name: "<script>alert(1)</script>", thresholds: ["latency.p95 < 20ms"] });
    const html = runReportHtml(r, intervals);
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toMatch(/<script|<link|<img|src=|@import|url\(/i);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect((html.match(/<svg/g) ?? []).length).toBeGreaterThanOrEqual(5);
    expect(html).toContain('data-threshold="latency.p95 &lt; 20ms"');
    expect(html).toContain("close 1011 (internal error): &lt;b&gt;overloaded&lt;/b&gt;");
    expect(html).toContain("@media print");
    expect(html).toContain("10 connections opened at 10/s");
    expect(html).toContain('data-status="failed"');
  });

  it("carries every chart the run page shows: the four timelines (their second axes too) and the percentile spectrum", () => {
    const { run: r, intervals, frames } = run({ thresholds: ["latency.p95 < 20ms"] });
    const html = runReportHtml(r, intervals, analyzeFrames(frames));
    const charts = [...html.matchAll(/data-chart="([^"]+)"/g)].map((m) => m[1]);
    expect(charts).toEqual([
      "Latency (ms, from intended send time)",
      "Messages per second and connections",
      "Errors and disconnects",
      "Agent health: not saturated",
      "spectrum",
    ]);
    // The page's series, each named in a key: connect failures, event-loop delay and send lag included.
    for (const label of ["p50", "p95", "p99", "sent/s", "received/s", "connections", "errors/s", "disconnects/s", "lost/s", "connect failures/s"])
      expect(html).toContain(`${label}: <b>`);
    expect(html).toContain("event-loop delay: <b>");
    expect(html).toContain("send lag: <b>");
    // The spectrum: log x labelled by percentile, the round trip's p99 in its key.
    const spectrum = html.slice(html.indexOf('data-chart="spectrum"'));
    expect(spectrum).toMatch(/>90%<\/text>.*>99%<\/text>/s);
    expect(spectrum).toMatch(/round trip: p99 <b>5\d\.\d+ ?ms<\/b>/);
    expect(html).not.toMatch(/<script|<link|<img|src=|@import|url\(/i);
    // Without samples there is no spectrum to draw, and no empty chart.
    expect(runReportHtml(r, intervals)).not.toContain('data-chart="spectrum"');
  });

  it("draws a sweep's latency vs messages/s with a point per step: the failed one hollow, the capacity step ringed, the stop rule's line", () => {
    const { run: r, intervals } = sweepRun();
    expect(r.summary!.steps).toHaveLength(3);
    expect(r.summary!.capacity).toMatchObject({ rate: 200, step: 1 });
    const html = runReportHtml(r, intervals);
    const at = html.indexOf('data-chart="sweep"');
    expect(at).toBeGreaterThan(0);
    const sweep = html.slice(at, html.indexOf("</svg>", at));
    const points = [...sweep.matchAll(/<circle[^>]*data-point="(step \d+[^"]*)"/g)].map((m) => m[1]);
    expect(points).toHaveLength(3);
    expect(points[0]).toMatch(/^step 1: 100 sent\/s, p95 5\.\d+ ?ms, held$/);
    expect(points[2]).toMatch(/^step 3: 300 sent\/s, p95 4\d\d(\.\d+)? ?ms, broke the stop rule$/);
    expect(sweep).toMatch(/<circle[^>]*fill="#fff"[^>]*data-point="step 3/);
    expect(sweep.match(/r="7\.5"/g)).toHaveLength(1);
    expect(sweep).toContain('data-threshold="stop rule: p95 ≤ 200 ms"');
    // The chart sits with the steps table, and the timelines shade each step.
    expect(html.indexOf('data-chart="sweep"')).toBeLessThan(html.indexOf('aria-label="Sweep steps"'));
    expect(html).toContain(">100/s</text>");
  });
});
