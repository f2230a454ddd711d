import type { Plan, RunSummary, Threshold } from "@volley/contracts";
import { summarizeFrames, type FrameLike } from "./aggregate";
import { capacityOf, summarizeSteps, type SweepContext } from "./sweep-steps";
import { reconnectStorms } from "./reconnect-storms";
import { agentEvidence, sanityChecks } from "./sanity-checks";
import { evaluateThresholds } from "./thresholds";

/**
 * The full run summary as the API, the hub and the standalone agent report it: merged frames plus
 * thresholds and the default sanity checks. Pass the plan (its sweep and scenario) so sweep steps are judged on the merged
 * measurements and the capacity is found; without it, steps carry only the shards' own verdicts.
 */
export function summarizeRun(
  frames: readonly FrameLike[],
  thresholds: ReadonlyArray<string | Threshold>,
  plan?: SweepContext & Partial<Pick<Plan, "sanity">>,
): RunSummary {
  const measured = summarizeFrames(frames);
  const steps = summarizeSteps(frames, plan);
  const capacity = capacityOf(steps, plan);
  const storms = reconnectStorms(frames);
  const full = { ...measured, ...(steps.length > 0 ? { steps } : {}), ...(capacity ? { capacity } : {}), ...(storms ? { reconnectStorms: storms } : {}) };
  // Without the plan (a partial view) only the thresholds are judged; with it, the sanity checks too.
  const sanity = plan ? sanityChecks(full, plan.sanity, agentEvidence(frames)) : [];
  return { ...full, thresholds: [...evaluateThresholds(thresholds, full), ...sanity] };
}
