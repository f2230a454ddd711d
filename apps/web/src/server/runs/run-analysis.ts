import type { RunAnalysis } from "@volley/contracts";
import { DEFAULT_ORG_ID, getRun, listFrames } from "@volley/db";
import { analyzeFrames } from "@volley/metrics";
import { notFound } from "../http/errors";
import { getDb } from "../http/services";

/** The run's percentile spectra and per-agent breakdown, from every stored frame (merged exactly). */
export async function loadRunAnalysis(id: string, orgId = DEFAULT_ORG_ID): Promise<RunAnalysis> {
  const db = getDb();
  const row = await getRun(db, id, orgId);
  if (!row) throw notFound(`run ${id}`);
  return analyzeFrames(await listFrames(db, id));
}
