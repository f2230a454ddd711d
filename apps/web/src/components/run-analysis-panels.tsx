"use client";

import type { RunAnalysis } from "@volley/contracts";
import { useEffect, useState } from "react";
import { apiFetch } from "../lib/api-client";
import { AgentBreakdown } from "./agent-breakdown";
import { PercentileSpectrum } from "./percentile-spectrum";

/** While a run runs the analysis (a merge of every stored histogram) is re-read at this pace, not per second. */
const LIVE_REFRESH_MS = 10_000;

type State = { kind: "loading" } | { kind: "ready"; analysis: RunAnalysis } | { kind: "error"; message: string };

/** The percentile spectrum and the per-agent breakdown, read from /api/v1/runs/{id}/analysis, or as the page `loaded` them (a shared run). */
export function RunAnalysisPanels({ runId, final, storedPoints, loaded }: { runId: string; final: boolean; storedPoints: number; loaded?: RunAnalysis }) {
  const [state, setState] = useState<State>(loaded ? { kind: "ready", analysis: loaded } : { kind: "loading" });
  const hasData = storedPoints > 0;
  const fetches = !loaded;

  useEffect(() => {
    if (!hasData || !fetches) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const analysis = await apiFetch<RunAnalysis>(`/api/v1/runs/${runId}/analysis`);
        if (!cancelled) setState({ kind: "ready", analysis });
      } catch (err) {
        if (!cancelled) setState((s) => (s.kind === "ready" ? s : { kind: "error", message: err instanceof Error ? err.message : String(err) }));
      }
      if (!cancelled && !final) timer = setTimeout(() => void load(), LIVE_REFRESH_MS);
    };
    // After the page's first frames: the timelines above paint first, this answer and the spectrum's drawing come after.
    let frame = requestAnimationFrame(() => {
      frame = requestAnimationFrame(() => {
        timer = setTimeout(() => void load(), 0);
      });
    });
    return () => {
      cancelled = true;
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [runId, final, hasData, fetches]);

  if (!hasData) return null;
  return (
    <section className="analysis-grid">
      <div className="panel">
        <h2 className="panel-title">Percentile spectrum{!final && <span className="title-note"> (so far)</span>}</h2>
        {state.kind === "loading" && <p className="muted">Merging the histograms…</p>}
        {state.kind === "error" && <p className="bad">Could not load the distribution: {state.message}</p>}
        {state.kind === "ready" && <PercentileSpectrum spectra={state.analysis.spectra} />}
      </div>
      <div className="panel">
        <h2 className="panel-title">Per agent</h2>
        {state.kind === "loading" && <p className="muted">Loading…</p>}
        {state.kind === "error" && <p className="bad">Could not load the per-agent breakdown: {state.message}</p>}
        {state.kind === "ready" && <AgentBreakdown agents={state.analysis.agents} />}
      </div>
    </section>
  );
}
