import { planSchema, type PlanInput } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
import { runShard } from "../engine/run-shard";
import type { EngineFrame, ShardOutcome } from "../engine/types";

/** Runs one shard of a flow plan to its end, keeping every frame (the flow tests' common step). */
export async function runFlow(input: PlanInput): Promise<{ frames: EngineFrame[]; outcome: ShardOutcome }> {
  const frames: EngineFrame[] = [];
  const outcome = await runShard(planSchema.parse(input), { startAt: Date.now() + 20, onFrame: (f) => frames.push(f) });
  return { frames, outcome };
}

/** How many values a histogram holds over every frame of a shard. */
export function histogramCount(frames: readonly EngineFrame[], name: string): number {
  return mergeEncoded(frames.flatMap((f) => f.histograms[name] ?? [])).totalCount;
}
