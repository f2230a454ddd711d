import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { defaultWorkers, quotaCores } from "./default-workers";

describe("default engine threads", () => {
  it("is one per core, capped by a cgroup CPU quota (rounded up), never 0", () => {
    expect(quotaCores("max 100000")).toBeUndefined();
    expect(quotaCores("200000 100000")).toBe(2);
    expect(quotaCores("150000 100000")).toBe(2);
    expect(quotaCores("50000 100000")).toBe(1);
    expect(quotaCores("garbage")).toBeUndefined();
    expect(defaultWorkers("max 100000")).toBe(availableParallelism());
    expect(defaultWorkers("100000 100000")).toBe(1);
    expect(defaultWorkers(`${(availableParallelism() + 8) * 100000} 100000`)).toBe(availableParallelism());
  });
});
