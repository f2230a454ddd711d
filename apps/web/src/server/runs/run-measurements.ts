import { FINAL_RUN_STATUSES, type IntervalPoint, type RunAnalysis, type RunSummary } from "@volley/contracts";
import { getRunMeter, getRunMeterSummary, listFrames, listRunPoints, type Db, type RunRow } from "@volley/db";
import { mergeTimeline, RunTally } from "@volley/metrics";

/**
 * A run's measurements as the readers show them, from the merged rows the hub's run meter writes
 * (run_meters, run_points): no reader merges raw frames again. Runs stored before the meter existed
 * (no run_meters row) are merged from their raw frames, folded into a RunTally as the hub's meter
 * folds them: a stored histogram that cannot be decoded is left out and named in the summary
 * (`leftOut`), never a failed read.
 */

async function tallyOf(db: Db, runId: string): Promise<RunTally | null> {
  const frames = await listFrames(db, runId);
  if (frames.length === 0) return null;
  const tally = new RunTally();
  for (const f of frames) tally.add(f);
  return tally;
}

/** Final: the run row's summary. Running: the meter's live summary (sanity checks off until it ends). Null before the first frame. */
export async function runSummaryOf(db: Db, row: RunRow): Promise<RunSummary | null> {
  const final = FINAL_RUN_STATUSES.includes(row.status);
  if (final && row.summary) return row.summary;
  if (!final && row.status !== "running") return null;
  const meter = await getRunMeterSummary(db, row.id);
  if (meter) return meter.summary;
  // Before the meter: merged from the stored frames (the sanity checks judge only a whole run).
  const tally = await tallyOf(db, row.id);
  return tally?.summary(row.plan.thresholds, final ? row.plan : { ...row.plan, sanity: false }) ?? null;
}

/** One point per second, every agent's frame merged. */
export async function runTimelineOf(db: Db, runId: string): Promise<IntervalPoint[]> {
  const points = await listRunPoints(db, runId);
  if (points.length > 0 || (await getRunMeterSummary(db, runId))) return points;
  return mergeTimeline(await listFrames(db, runId));
}

/** Percentile spectra and the per-agent breakdown. */
export async function runAnalysisOf(db: Db, runId: string): Promise<RunAnalysis> {
  const meter = await getRunMeter(db, runId);
  if (meter?.analysis) return meter.analysis;
  if (meter) return { spectra: {}, agents: [] }; // metered, no frame yet
  return (await tallyOf(db, runId))?.analysis() ?? { spectra: {}, agents: [] };
}
