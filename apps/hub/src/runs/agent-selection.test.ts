import { describe, expect, it } from "vitest";
import { selectAgents, type IdleAgent } from "./agent-selection";

const agent = (id: string, maxConnections: number, cores = 2): IdleAgent => ({ id, capacity: { maxConnections, cores } });

describe("agent selection", () => {
  const idle = [agent("agt_small", 5_000), agent("agt_big", 20_000), agent("agt_mid", 10_000, 4), agent("agt_mid2", 10_000, 2)];

  it("takes the N largest idle agents, largest first, cores breaking ties", () => {
    expect(selectAgents(3, "p", idle)).toEqual({
      ok: true,
      slots: [
        { agentId: "agt_big", weight: 20_000 },
        { agentId: "agt_mid", weight: 10_000 },
        { agentId: "agt_mid2", weight: 10_000 },
      ],
    });
  });

  it("gives shards beyond the idle agents the chosen agents' average weight and no agent", () => {
    expect(selectAgents(4, "p", [agent("a", 3_000), agent("b", 1_000)])).toEqual({
      ok: true,
      slots: [
        { agentId: "a", weight: 3_000 },
        { agentId: "b", weight: 1_000 },
        { agentId: null, weight: 2_000 },
        { agentId: null, weight: 2_000 },
      ],
    });
    // Nobody idle: equal shards that wait for whichever agent frees up.
    expect(selectAgents(2, "p", [])).toEqual({
      ok: true,
      slots: [
        { agentId: null, weight: 1 },
        { agentId: null, weight: 1 },
      ],
    });
  });

  it("gives equal agents their shards in the order they connected", () => {
    const at = (ms: number) => new Date(1_700_000_000_000 + ms);
    const r = selectAgents(2, "p", [
      { ...agent("agt_a", 100), connectedAt: at(5) },
      { ...agent("agt_b", 100), connectedAt: at(1) },
    ]);
    expect(r.ok && r.slots.map((s) => s.agentId)).toEqual(["agt_b", "agt_a"]);
  });

  it('takes every idle agent for "all", and names the pool when there is none', () => {
    const all = selectAgents("all", "p", idle);
    expect(all.ok && all.slots.map((s) => s.agentId)).toEqual(["agt_big", "agt_mid", "agt_mid2", "agt_small"]);
    expect(selectAgents("all", "eu", [])).toEqual({ ok: false, reason: expect.stringContaining(`agents.count is "all" but pool 'eu' has no idle agent`) });
  });

  it("refuses a plan whose connections exceed what the chosen agents hold, naming each agent and the fix", () => {
    // "all": 20k + 10k + 10k + 5k = 45k.
    expect(selectAgents("all", "p", idle, 45_000).ok).toBe(true);
    expect(selectAgents("all", "p", idle, 45_001)).toEqual({
      ok: false,
      reason:
        "connections.count is 45,001 but the 4 idle agents chosen from pool 'p' hold at most 45,000 " +
        "(agt_big 20,000, agt_mid 10,000, agt_mid2 10,000, agt_small 5,000); lower connections.count to 45,000 or less, or start more agents in pool 'p'",
    });
    // N of more idle agents: raising agents.count is the way out.
    const two = selectAgents(2, "p", idle, 30_001);
    expect(!two.ok && two.reason).toContain("hold at most 30,000 (agt_big 20,000, agt_mid 10,000)");
    expect(!two.ok && two.reason).toContain("raise agents.count (pool 'p' has 4 idle agents)");
    expect(selectAgents(2, "p", idle, 30_000).ok).toBe(true);
    // Every idle agent already chosen: more agents must be started, and counted.
    const one = selectAgents(1, "p", [agent("solo", 1_000)], 1_500);
    expect(!one.ok && one.reason).toContain("the 1 idle agent chosen from pool 'p' holds at most 1,000 (solo 1,000)");
    expect(!one.ok && one.reason).toContain("start more agents in pool 'p' and raise agents.count");
  });

  it("does not judge capacity while some shards wait for an agent that is not idle yet", () => {
    // Two shards, one idle agent: the second shard's agent and its capacity are unknown.
    const r = selectAgents(2, "p", [agent("a", 1_000)], 50_000);
    expect(r).toEqual({
      ok: true,
      slots: [
        { agentId: "a", weight: 1_000 },
        { agentId: null, weight: 1_000 },
      ],
    });
  });
});
