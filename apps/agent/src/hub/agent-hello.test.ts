import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { buildAgentHello } from "./agent-hello";

const base = { token: "t", name: "a", pool: "default", maxConnections: 10 };

describe("agent hello", () => {
  it("offers the cores its engine threads can use: 1 on the main thread, never more than the machine's", () => {
    expect(buildAgentHello(base).capacity.cores).toBe(availableParallelism());
    expect(buildAgentHello({ ...base, workers: 0 }).capacity.cores).toBe(1);
    expect(buildAgentHello({ ...base, workers: 1 }).capacity.cores).toBe(1);
    expect(buildAgentHello({ ...base, workers: 4096 }).capacity.cores).toBe(availableParallelism());
  });
});
