import type { RunAnalysis } from "@volley/contracts";
import { DEFAULT_ORG_ID, getRun, listAgents } from "@volley/db";
import { notFound } from "../http/errors";
import { getDb } from "../http/services";
import { runAnalysisOf } from "./run-measurements";

/** The run's percentile spectra and per-agent breakdown (every frame merged exactly, by the hub's run meter). */
export async function loadRunAnalysis(id: string, orgId = DEFAULT_ORG_ID): Promise<RunAnalysis> {
  const db = getDb();
  const row = await getRun(db, id, orgId);
  if (!row) throw notFound(`run ${id}`);
  const analysis = await runAnalysisOf(db, id);
  if (analysis.agents.length === 0) return analysis;
  // Names as the Agents page shows them: people know their agents by name, not by agt_… id.
  const names = new Map((await listAgents(db, orgId)).map((a) => [a.id, a.name]));
  return { ...analysis, agents: analysis.agents.map((a) => ({ ...a, agentName: names.get(a.agentId) ?? null })) };
}
