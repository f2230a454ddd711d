import { describe, expect, it } from "vitest";
import { planSchema } from "@volley/contracts";
import { describeConnections } from "./plan-describe";

const plan = (connections: unknown) =>
  planSchema.parse({
    name: "p",
    target: { url: "ws://127.0.0.1:9001/echo", protocol: "ws" },
    connections,
    scenario: { kind: "echo", message: { rate: 1 }, duration: "10s" },
  });

describe("describeConnections", () => {
  it("describes a staged plan by its stages, never as 'N connections at R/s'", () => {
    const text = describeConnections(
      plan({
        count: 1000,
        rate: 100,
        stages: [
          { duration: "20s", target: 300 },
          { duration: "30s", target: 1000 },
          { duration: "10s", target: 0 },
        ],
      }),
    );
    expect(text).toBe("stages 20 s → 300, 30 s → 1,000, 10 s → 0 (peak 1,000 connections)");
    expect(text).not.toMatch(/connections at|opened at/);
  });

  it("describes a ramp by count and rate", () => {
    expect(describeConnections(plan({ count: 300, rate: 100 }))).toBe("300 connections opened at 100/s");
    expect(describeConnections(plan({ count: 1, rate: 5 }))).toBe("1 connection opened at 5/s");
  });
});
