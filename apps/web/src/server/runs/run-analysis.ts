import type { RunAnalysis } from "@volley/contracts";
import { DEFAULT_ORG_ID, getRun } from "@volley/db";
import { notFound } from "../http/errors";
import { getDb } from "../http/services";
import { runAnalysisOf } from "./run-measurements";

/** The run's percentile spectra and per-agent breakdown (every frame merged exactly, by the hub's run meter). */
export async function loadRunAnalysis(id: string, orgId = DEFAULT_ORG_ID): Promise<RunAnalysis> {
  const db = getDb();
  const row = await getRun(db, id, orgId);
  if (!row) throw notFound(`run ${id}`);
  return runAnalysisOf(db, id);
}
