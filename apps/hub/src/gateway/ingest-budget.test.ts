import { describe, expect, it } from "vitest";
import { DEFAULT_INGEST_LIMITS, IngestBudget } from "./ingest-budget";

/** A budget on a clock the test moves (milliseconds). */
function budget(overrides: Partial<typeof DEFAULT_INGEST_LIMITS> = {}) {
  const clock = { now: 0 };
  return { clock, b: new IngestBudget({ ...DEFAULT_INGEST_LIMITS, ...overrides }, () => clock.now) };
}

describe("ingest budget", () => {
  it("lets an agent spend its rate times the window at once, then its rate, and names the setting past it", () => {
    const { clock, b } = budget({ agentMsPerS: 100, orgMsPerS: 10_000, windowMs: 10_000 });
    expect(b.spendMs("a1", "o1", 999)).toBeNull();
    expect(b.spendMs("a1", "o1", 2)).toMatchObject({ setting: "HUB_INGEST_AGENT_MS_PER_S" });
    // Another agent of the org, and the same agent a second later (100 ms refilled), may spend again.
    expect(b.spendMs("a2", "o1", 500)).toBeNull();
    clock.now += 1000;
    expect(b.spendMs("a1", "o1", 90)).toBeNull();
    expect(b.spendMs("a1", "o1", 20)).toMatchObject({
      setting: "HUB_INGEST_AGENT_MS_PER_S",
      why: "its frames cost the hub more than HUB_INGEST_AGENT_MS_PER_S=100 ms of checking and decoding per second (averaged over HUB_INGEST_WINDOW_S=10 s)",
    });
  });

  it("counts every agent of an org against the org's budget, and only that org's", () => {
    const { b } = budget({ agentMsPerS: 1000, orgMsPerS: 100, windowMs: 10_000 });
    for (let i = 0; i < 9; i++) expect(b.spendMs(`a${i}`, "o1", 110)).toBeNull();
    expect(b.spendMs("a9", "o1", 20)).toMatchObject({ setting: "HUB_INGEST_ORG_MS_PER_S" });
    // An agent with nothing spent of its own is refused while its org is overdrawn; another org is not.
    expect(b.spendMs("a10", "o1", 0)).toMatchObject({ setting: "HUB_INGEST_ORG_MS_PER_S" });
    expect(b.spendMs("x1", "o2", 900)).toBeNull();
  });

  it("budgets bytes per agent and per org", () => {
    const { b } = budget({ agentBytesPerS: 100, orgBytesPerS: 150, windowMs: 1000 });
    expect(b.spendBytes("a1", "o1", 100)).toBeNull();
    expect(b.spendBytes("a1", "o1", 1)).toMatchObject({ setting: "HUB_INGEST_AGENT_BYTES_PER_S" });
    expect(b.spendBytes("a2", "o1", 60)).toMatchObject({ setting: "HUB_INGEST_ORG_BYTES_PER_S" });
  });

  it("allows maxRefusedFrames refusals per window, quoting the last", () => {
    const { clock, b } = budget({ maxRefusedFrames: 3, windowMs: 3000 });
    for (let i = 0; i < 3; i++) expect(b.refused("a1", "bad")).toBeNull();
    expect(b.refused("a1", "invalid frame: seq")).toEqual({
      setting: "HUB_INGEST_MAX_REFUSED_FRAMES",
      why: "more than HUB_INGEST_MAX_REFUSED_FRAMES=3 of its frames were refused within HUB_INGEST_WINDOW_S=3 s (the last: invalid frame: seq)",
    });
    clock.now += 3000;
    expect(b.refused("a1", "bad")).toBeNull();
  });

  it("refuses a cut-off agent's identity for cutOffMs, then forgets it", () => {
    const { clock, b } = budget({ cutOffMs: 60_000 });
    b.block(["o1\ni:inst"], "agent cut off by the hub for 60 s: why");
    expect(b.blockedReason(["o1\ni:other", "o1\ni:inst"])).toBe("agent cut off by the hub for 60 s: why (refused for another 60 s)");
    expect(b.blockedReason(["o2\ni:inst"])).toBeNull();
    clock.now += 60_000;
    expect(b.blockedReason(["o1\ni:inst"])).toBeNull();
  });
});
