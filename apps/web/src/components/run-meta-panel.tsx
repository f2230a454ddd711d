"use client";

import { FINAL_RUN_STATUSES, type RunShare, type RunWithMeta } from "@volley/contracts";
import Link from "next/link";
import { useState } from "react";
import { apiFetch, ApiRequestError } from "../lib/api-client";
import { MetaEditor } from "./meta-editor";

const describe = (err: unknown) => (err instanceof ApiRequestError ? err.message : String(err));

/** Beside a run: its tags and notes, whether it is its plan's baseline, and a read-only link for the org. */
export function RunMetaPanel({ run, canWrite }: { run: RunWithMeta; canWrite: boolean }) {
  const [baseline, setBaseline] = useState(run.baseline);
  const [share, setShare] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const final = FINAL_RUN_STATUSES.includes(run.status);

  async function toggleBaseline() {
    setError(null);
    try {
      if (baseline) await apiFetch(`/api/v1/plans/${run.planId}/baseline`, { method: "DELETE" });
      else await apiFetch(`/api/v1/plans/${run.planId}/baseline`, { method: "PUT", body: JSON.stringify({ runId: run.id }) });
      setBaseline(!baseline);
    } catch (err) {
      setError(describe(err));
    }
  }

  async function makeLink() {
    setError(null);
    try {
      const { share: s } = await apiFetch<{ share: RunShare }>(`/api/v1/runs/${run.id}/shares`, { method: "POST" });
      setShare(`${window.location.origin}${s.path}`);
    } catch (err) {
      setError(describe(err));
    }
  }

  return (
    <section className="panel run-meta" aria-label="Tags, notes and sharing">
      <h2 className="panel-title">Tags, notes and sharing</h2>
      <div className="run-meta-grid">
        <MetaEditor endpoint={`/api/v1/runs/${run.id}`} initialTags={run.tags} initialNotes={run.notes} canEdit={canWrite} what="run" />
        <div className="run-meta-side">
          {run.planId ? (
            <p className="small">
              <span data-testid="plan-version">
                {run.planVersion !== null ? (
                  <>
                    Ran <Link href={`/plans/${run.planId}`}>version {run.planVersion}</Link> of its plan.
                  </>
                ) : (
                  <span className="muted">Ran its plan (version not recorded).</span>
                )}
              </span>
              <br />
              {baseline ? (
                <span className="badge baseline-badge" data-testid="baseline-badge">
                  Baseline of its plan
                </span>
              ) : (
                <span className="muted">Not its plan&apos;s baseline.</span>
              )}{" "}
              {canWrite && final && run.summary && (baseline || run.status !== "inconclusive") && (
                <button type="button" className="button" onClick={toggleBaseline} data-testid="baseline-toggle">
                  {baseline ? "Clear baseline" : "Mark as baseline"}
                </button>
              )}
              <br />
              <Link href={`/plans/${run.planId}/trend`}>Plan trend</Link> · <Link href={`/compare?runs=${run.id}`}>Compare with other runs</Link>
            </p>
          ) : (
            <p className="small muted">An inline plan&apos;s run: save the plan to get a baseline and a trend.</p>
          )}
          {run.scheduleId && <p className="small muted">Started by the plan&apos;s schedule.</p>}
          <p className="small">
            <button type="button" className="button" onClick={makeLink} data-testid="share-button">
              Share read-only link
            </button>
          </p>
          {share && (
            <p className="small share-link" role="status">
              <input type="text" readOnly value={share} aria-label="Share link" onFocus={(e) => e.currentTarget.select()} />
              <span className="subtle">Opens this run for members of this organization (viewers too); nobody else.</span>
            </p>
          )}
          {error && (
            <p className="bad small" role="alert">
              {error}
            </p>
          )}
        </div>
      </div>
    </section>
  );
}
