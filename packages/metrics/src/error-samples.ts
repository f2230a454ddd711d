import { ERROR_SAMPLES_PER_CLASS, type IntervalFrame } from "@volley/contracts";

/** The parts of a frame error samples are read from (stored rows carry null for no samples). */
export type ErrorSampleFrameLike = Pick<IntervalFrame, "index"> & { samples?: IntervalFrame["samples"] | null };

/**
 * Per error class, the first ERROR_SAMPLES_PER_CLASS distinct texts the agents sent (`kind: "error"`
 * samples), frames taken in interval order; undefined when no error was sampled. Distinct, because
 * a thousand connections closed with the same code say one thing, and two different close reasons
 * must both show.
 */
export function summarizeErrorSamples(frames: readonly ErrorSampleFrameLike[]): Record<string, string[]> | undefined {
  const withErrors = frames.filter((f) => f.samples?.some((s) => s.kind === "error"));
  if (withErrors.length === 0) return undefined;
  const byClass: Record<string, string[]> = {};
  for (const f of [...withErrors].sort((a, b) => a.index - b.index)) {
    for (const s of f.samples!) {
      if (s.kind !== "error") continue;
      const list = (byClass[s.event] ??= []);
      if (list.length < ERROR_SAMPLES_PER_CLASS && !list.includes(s.data)) list.push(s.data);
    }
  }
  return byClass;
}
