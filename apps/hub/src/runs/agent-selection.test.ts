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
    expect(selectAgents(2, "p", [])).toEqual({ ok: true, slots: [{ agentId: null, weight: 1 }, { agentId: null, weight: 1 }] });
  });

  it("gives equal agents their shards in the order they connected", () => {
    const at = (ms: number) => new Date(1_700_000_000_000 + ms);
    const r = selectAgents(2, "p", [{ ...agent("agt_a", 100), connectedAt: at(5) }, { ...agent("agt_b", 100), connectedAt: at(1) }]);
    expect(r.ok && r.slots.map((s) => s.agentId)).toEqual(["agt_b", "agt_a"]);
  });

  it('takes every idle agent for "all", and names the pool when there is none', () => {
    const all = selectAgents("all", "p", idle);
    expect(all.ok && all.slots.map((s) => s.agentId)).toEqual(["agt_big", "agt_mid", "agt_mid2", "agt_small"]);
    expect(selectAgents("all", "eu", [])).toEqual({ ok: false, reason: expect.stringContaining(`agents.count is "all" but pool 'eu' has no idle agent`) });
  });
});
