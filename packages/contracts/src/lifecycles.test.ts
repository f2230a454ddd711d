import { describe, expect, it } from "vitest";
import { FINAL_RUN_STATUSES, runStatusSchema } from "./run";
import { canMoveRun, RUN_LIFECYCLE, runStatusesBefore } from "./run-lifecycle";
import { canMoveShard, SHARD_LIFECYCLE, shardEndStatusSchema, shardStatusesBefore, shardStatusSchema } from "./shard-lifecycle";

describe("shard lifecycle", () => {
  it("covers every state, and an ended shard never moves again", () => {
    expect(Object.keys(SHARD_LIFECYCLE).sort()).toEqual([...shardStatusSchema.options].sort());
    for (const end of shardEndStatusSchema.options) for (const to of shardStatusSchema.options) expect(canMoveShard(end, to)).toBe(false);
  });

  it("moves forward only: queued work is taken, started, ended", () => {
    expect(canMoveShard("pending", "assigned")).toBe(true);
    expect(canMoveShard("assigned", "running")).toBe(true);
    expect(canMoveShard("running", "completed")).toBe(true);
    expect(canMoveShard("pending", "running")).toBe(false);
    expect(canMoveShard("running", "assigned")).toBe(false);
    expect(canMoveShard("completed", "aborted")).toBe(false);
    expect(shardStatusesBefore("running")).toEqual(["assigned"]);
    expect(shardStatusesBefore("aborted")).toEqual(["pending", "assigned", "running"]);
  });
});

describe("run lifecycle", () => {
  it("covers every status; only a restatement moves between final statuses, and only between the verdicts the measurements decide", () => {
    expect(Object.keys(RUN_LIFECYCLE).sort()).toEqual([...runStatusSchema.options].sort());
    const verdicts = ["passed", "failed", "inconclusive"];
    for (const from of FINAL_RUN_STATUSES)
      for (const to of runStatusSchema.options) expect(canMoveRun(from, to)).toBe(from !== to && verdicts.includes(from) && verdicts.includes(to));
  });

  it("ends a run inconclusive only from running or a restatement, and never moves an error, abort or degraded run to it", () => {
    expect(FINAL_RUN_STATUSES).toContain("inconclusive");
    expect(runStatusesBefore("inconclusive")).toEqual(["running", "passed", "failed"]);
    for (const from of ["queued", "errored", "aborted", "degraded"] as const) expect(canMoveRun(from, "inconclusive")).toBe(false);
  });

  it("starts only from queued and ends a verdict only from running", () => {
    expect(runStatusesBefore("running")).toEqual(["queued"]);
    expect(runStatusesBefore("passed")).toEqual(["running", "failed", "inconclusive"]);
    expect(runStatusesBefore("aborted")).toEqual(["queued", "running"]);
    expect(canMoveRun("queued", "passed")).toBe(false);
    expect(canMoveRun("running", "queued")).toBe(false);
  });
});
