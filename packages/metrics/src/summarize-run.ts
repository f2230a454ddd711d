import type { RunSummary } from "@volley/contracts";
import { summarizeFrames, type FrameLike } from "./aggregate";
import { evaluateThresholds } from "./thresholds";

/** The full run summary as the API, the hub and the standalone agent report it: merged frames plus thresholds. */
export function summarizeRun(frames: readonly FrameLike[], thresholds: readonly string[]): RunSummary {
  const measured = summarizeFrames(frames);
  return { ...measured, thresholds: evaluateThresholds(thresholds, measured) };
}
