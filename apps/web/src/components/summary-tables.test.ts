import { COUNTERS, HISTOGRAMS, planSchema, runSummarySchema, type Run } from "@volley/contracts";
import { IntervalRecorder, summarizeRun } from "@volley/metrics";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { SummaryTables } from "./summary-tables";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

const plan = planSchema.parse({
  name: "mqtt echo",
  target: { url: "ws://127.0.0.1:8080/mqtt", protocol: "mqtt", mqtt: { qos: 1 } },
  connections: { count: 2 },
  scenario: { kind: "echo", duration: "1s", message: { rate: 10 } },
});

function mqttRun(retained: number): Run {
  const r = new IntervalRecorder();
  r.increment(COUNTERS.sent, 20);
  r.increment(COUNTERS.received, 20);
  for (let i = 0; i < 20; i++) r.recordMicros(HISTOGRAMS.messageLatency, 1500);
  r.increment(COUNTERS.mqttAcked, 19);
  if (retained) r.increment(COUNTERS.mqttRetained, retained);
  const frames = [{ index: 0, startedAt: 0, durationMs: 1000, warmup: false, ...r.take(), health }];
  const summary = runSummarySchema.parse(summarizeRun(frames, []));
  return {
    id: "run_mqtt",
    status: "passed",
    reason: null,
    name: "mqtt echo",
    plan,
    createdAt: "2026-01-01T00:00:00Z",
    startedAt: null,
    endedAt: null,
    summary,
  };
}

const text = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describe("MQTT counts on the run page", () => {
  it("shows the broker's QoS acknowledgements, and retained copies when there were any", () => {
    const with2 = text(renderToStaticMarkup(createElement(SummaryTables, { run: mqttRun(2) })));
    expect(with2).toContain("QoS acknowledged 19");
    expect(with2).toContain("Retained copies 2");
    const none = text(renderToStaticMarkup(createElement(SummaryTables, { run: mqttRun(0) })));
    expect(none).toContain("QoS acknowledged 19");
    expect(none).not.toContain("Retained copies");
  });
});
