import { planSchema, type Run, type SweepStep } from "@volley/contracts";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { xOf } from "../lib/sweep-curves";
import { SweepPanel } from "./sweep-panel";

const latency = (p95: number) => ({ count: 10, min: 1, mean: p95 / 2, p50: p95 / 2, p90: p95, p95, p99: p95, max: p95 });

/** A users sweep's step as the summary has it (plannedRate in users/s). */
const step = (index: number, rate: number, users: SweepStep["users"], p95: number, failed = false): SweepStep => ({
  index,
  plannedRate: rate,
  per: "aggregate",
  startedAt: 0,
  seconds: 2,
  sent: 0,
  received: 0,
  lost: 0,
  errors: 0,
  disconnects: 0,
  sendRate: 0,
  receiveRate: 0,
  deliveryRate: 0,
  latency: latency(p95),
  delivery: latency(0),
  saturated: false,
  failed,
  aborted: false,
  reason: failed ? "p95 420ms > 200ms" : null,
  generatorLimited: false,
  generatorReason: null,
  users,
});

describe("the sweep panel for a users sweep", () => {
  it("reads in users: arrival rates, each step's started, completed and failed users, and the capacity in users/s", () => {
    const plan = planSchema.parse({
      name: "todo users",
      target: { url: "http://127.0.0.1:8080", protocol: "http" },
      connections: { count: 100 },
      scenario: { kind: "users", arrivalRate: 20, duration: "30s" },
      flow: { steps: [{ request: { method: "POST", url: "/api/todos", json: {} } }] },
      sweep: { step: 20, hold: "2s", stopWhen: { p95: "200ms" } },
    });
    const steps = [
      step(0, 20, { started: 40, completed: 40, failed: 0, dropped: 0 }, 30),
      step(1, 40, { started: 80, completed: 79, failed: 1, dropped: 0 }, 40),
      step(2, 60, { started: 120, completed: 110, failed: 0, dropped: 0 }, 420, true),
    ];
    const capacity = {
      slo: "p95 <= 200ms",
      rate: 40,
      per: "aggregate" as const,
      sendRate: 0,
      deliveryRate: 0,
      step: 1,
      lowerBound: false,
      agentSaturated: false,
      endedBy: "the step at 60 users/s broke it: p95 420ms > 200ms",
    };
    const run = { id: "r", plan, summary: { steps, capacity } } as unknown as Run;
    const html = renderToStaticMarkup(createElement(SweepPanel, { run }));
    expect(html).toContain("Step latency vs users arriving per second");
    expect(html).toContain("Planned (users/s)");
    expect(html).toContain("<strong>40 users/s</strong>");
    expect(html).not.toContain(" sent)");
    expect(html).toMatch(/<td class="num">2<\/td><td class="num">40<\/td><td class="num">80<\/td><td class="num">79<\/td><td class="num bad">1<\/td>/);
    // The curve's x is the arrivals each hold achieved.
    expect(steps.map((s) => xOf(s, "users"))).toEqual([20, 40, 60]);
  });
});
