import { planTiming, type IntervalPoint, type Run } from "@volley/contracts";

export interface RunProgress {
  /** 0..1 of the planned sending time. */
  fraction: number;
  /** What the bar says, e.g. "32 s of 60 s · about 28 s left". */
  text: string;
  /** After the sending: the most the run waits for its last replies (or users), e.g. "then up to 10 s for the last replies". */
  tail: string;
}

const secs = (ms: number) => `${Math.max(0, Math.round(ms / 1000)).toLocaleString("en-US")} s`;

/**
 * How far a running run is along its planned length (contracts' planTiming: the same reckoning as
 * the hub's deadlines), from its start instant: the first stored second's start, or until one is
 * stored the time the run started (a little earlier: arming). Null when nothing can be said (not
 * running). A sweep that stops at its first broken step may end sooner: its length reads "at most".
 */
export function runProgress(run: Run, intervals: readonly IntervalPoint[], now: number): RunProgress | null {
  if (run.status !== "running" || !run.startedAt) return null;
  const timing = planTiming(run.plan);
  const start = intervals[0]?.t ?? Date.parse(run.startedAt);
  const elapsed = Math.max(0, now - start);
  const total = timing.sendEndMs;
  const sweep = run.plan.sweep !== undefined;
  const users = run.plan.scenario.kind === "users";
  const tail = users
    ? `then up to ${secs(timing.endByMs - timing.sendEndMs)} for the last users to finish`
    : `then up to ${secs(timing.drainMs)} for the last replies`;
  if (elapsed >= total) return { fraction: 1, text: `${users ? "arrivals" : "sending"} done after ${secs(total)}`, tail: tail.replace(/^then /, "waiting ") };
  const of = `${sweep ? "at most " : ""}${secs(total)}`;
  return { fraction: elapsed / total, text: `${secs(elapsed)} of ${of} · about ${secs(total - elapsed)} left`, tail };
}
