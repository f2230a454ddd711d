import { z } from "zod";

const days = (what: string) =>
  z
    .number({ error: `${what}: a whole number of days, e.g. 30` })
    .int(`${what}: a whole number of days, e.g. 30`)
    .min(1, `${what}: at least 1 day (unset it to keep them forever)`)
    .nullable();

/**
 * How long finished runs keep their data (hub env RUN_FRAMES_RETENTION_DAYS, RUN_RETENTION_DAYS), and
 * gone agents their rows (AGENT_RETENTION_DAYS).
 * Two tiers, like hosted load-testing services: raw per-agent frames go first (the run page, API
 * summary, timeline, spectra and per-agent table read the merged rows, which stay); whole runs go
 * later, if at all. null keeps them forever.
 */
export const retentionJobSchema = z.object({
  /** Raw frames (run_intervals) of runs that ended more than this many days ago are deleted. */
  framesDays: days("framesDays"),
  /** Runs that ended more than this many days ago are deleted with everything they hold. */
  runsDays: days("runsDays"),
  /** Agents not heard from for this many days (holding no shard) are removed from the Agents list; absent or null: kept. */
  agentsDays: days("agentsDays").optional(),
});
export type RetentionJob = z.infer<typeof retentionJobSchema>;
