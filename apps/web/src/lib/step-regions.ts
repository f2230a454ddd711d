import { stageSpans, type IntervalPoint, type Run } from "@volley/contracts";
import type { ChartRegion } from "../components/timeline-chart";

/**
 * Spans to shade on a run's timelines, in seconds from the first interval: the sweep steps recorded
 * in the summary when there are any (failed and aborted ones marked), else the plan's connection
 * stages.
 */
export function stepRegions(run: Run, intervals: IntervalPoint[]): ChartRegion[] {
  const t0 = intervals[0]?.t;
  if (t0 === undefined) return [];
  const steps = run.summary?.steps;
  if (steps && steps.length > 0) {
    return steps.map((s) => {
      const from = (s.startedAt - t0) / 1000 - 0.5;
      const unit = s.per === "connection" ? "/s each" : "/s";
      return { from, to: from + Math.max(s.seconds, 0.5), label: `${+s.plannedRate.toPrecision(4)}${unit}`, failed: s.failed || s.aborted };
    });
  }
  return stageSpans(run.plan.connections.stages ?? []).map((s, n) => ({
    from: s.startMs / 1000 - 0.5,
    to: s.endMs / 1000 - 0.5,
    label: `stage ${n + 1} → ${s.target}`,
  }));
}
