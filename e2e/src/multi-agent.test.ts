import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Run } from "@volley/contracts";
import { startWsEchoServer } from "@volley/targets";
import { ECHO_DELAY_MS, expectExactSplitAndMerge, shardedEchoPlan } from "./sharded-run";
import { api, startStack, waitForFinal, type Stack } from "./stack-fixture";

const AGENTS = 3;

let stack: Stack;
let target: Awaited<ReturnType<typeof startWsEchoServer>>;

beforeAll(async () => {
  target = await startWsEchoServer({ port: 0, delayMs: ECHO_DELAY_MS });
  stack = await startStack({ agents: AGENTS });
});
afterAll(async () => {
  await stack?.stop();
  await target?.close();
});

describe("one plan over three agent processes", () => {
  it("splits the plan exactly, merges counts and percentiles exactly, breaks them down per agent and starts them together", async () => {
    const plan = shardedEchoPlan("e2e three agents", target.url, AGENTS);
    const created = await api<{ id: string }>(stack, "POST", "/api/v1/runs", { plan });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await waitForFinal<Run>(stack, created.body.id, 120_000);
    expect(run.status, `${run.reason}\n${stack.output.slice(-30).join("\n")}`).toBe("passed");
    await expectExactSplitAndMerge(stack, run, plan);

    // Synchronized start: how far apart the agents began.
    const s = run.summary!;
    const start = s.start!;
    expect(start.skewMs).not.toBeNull();
    console.info(
      `three-agent start skew: ${start.skewMs} ms (max late ${start.maxLateMs} ms; saturated intervals ${s.intervals.saturated}, send lag p99 ${s.sendLag.p99} ms)`,
    );
    // Three processes on one 2-core VM with CPU steal: the 10 ms goal is judged only when the
    // agents report they were undisturbed; otherwise a looser bound.
    const undisturbed = s.intervals.saturated === 0 && (s.sendLag.p99 ?? 0) < 10;
    expect(start.skewMs!).toBeLessThan(undisturbed ? 10 : 50);
  });
});
