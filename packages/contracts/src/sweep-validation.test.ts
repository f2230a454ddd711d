import { describe, expect, it } from "vitest";
import { planSchema, type PlanInput } from "./index";

const base: PlanInput = {
  name: "sweep",
  target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
  connections: { count: 2, rate: 10 },
  scenario: { kind: "echo", message: { bytes: 64, rate: 5, per: "connection" }, duration: "10s" },
  sweep: { step: 5 },
};
const issues = (plan: PlanInput) => (planSchema.safeParse(plan).error?.issues ?? []).map((i) => `${i.path.join(".")} ${i.message}`);

// Each of these used to validate and then be refused by every agent the moment the run started.
describe("a sweep the run cannot step", () => {
  it("is refused with connections.stages", () => {
    expect(issues({ ...base, connections: { count: 2, rate: 10, stages: [{ duration: "5s", target: 2 }] } })).toEqual([
      "sweep cannot be combined with connections.stages: a sweep steps the rate over a fixed population; remove one of them",
    ]);
  });

  it("is refused when no step (its warm-up and hold) fits in scenario.duration", () => {
    expect(issues({ ...base, scenario: { ...base.scenario, duration: "2s" } })).toEqual([
      "scenario.duration is 2000 ms, shorter than one sweep step (sweep.hold 3000 ms), so no step fits; set duration to at least 3s or shorten the step",
    ]);
    expect(issues({ ...base, scenario: { ...base.scenario, duration: "4s" }, sweep: { step: 5, warmup: "2s" } })).toEqual([
      "scenario.duration is 4000 ms, shorter than one sweep step (sweep.hold 3000 ms + sweep.warmup 2000 ms), so no step fits; set duration to at least 5s or shorten the step",
    ]);
  });

  it("is refused when until is below the first step's rate", () => {
    expect(issues({ ...base, sweep: { step: 5, until: 3 } })).toEqual([
      "sweep.until is 3, below the first step's rate (5, scenario.message.rate), so no step runs; raise until or set sweep.from below it",
    ]);
  });

  it("passes when one step fits", () => {
    expect(issues({ ...base, scenario: { ...base.scenario, duration: "3s" } })).toEqual([]);
  });
});
