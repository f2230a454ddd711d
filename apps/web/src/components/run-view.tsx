"use client";

import { durationMs, FINAL_RUN_STATUSES, type Run, type RunAnalysis } from "@volley/contracts";
import Link from "next/link";
import { useEffect, useMemo, useState } from "react";
import { ApiRequestError, apiFetch } from "../lib/api-client";
import { durationBetween, fmtDateTime, fmtDuration } from "../lib/format";
import { unpackPoints, type PackedPoints } from "../lib/packed-points";
import type { AbortResponse } from "../lib/types";
import { useLiveRun, type LiveMode } from "../lib/use-live-run";
import { RunAnalysisPanels } from "./run-analysis-panels";
import { describeConnections, describeScenario } from "../lib/plan-describe";
import { RunCharts } from "./run-charts";
import { RunHeadline } from "./run-headline";
import { RunLiveControl } from "./run-live-control";
import { RunExports } from "./run-exports";
import { StatusBadge } from "./status-badge";
import { ReconnectStormPanel } from "./reconnect-storm-panel";
import { SweepPanel } from "./sweep-panel";
import { SummaryTables } from "./summary-tables";

const isFinal = (s: Run["status"]) => FINAL_RUN_STATUSES.includes(s);

const MODE_LABEL: Record<LiveMode, { text: string; title: string }> = {
  connecting: { text: "connecting…", title: "Opening the live feed" },
  live: { text: "live", title: "Updates are pushed as each second is stored" },
  polling: { text: "polling", title: "The live feed is unavailable; reading the API every second instead" },
  ended: { text: "", title: "" },
  snapshot: { text: "as loaded", title: "A shared run is shown as it was when this page loaded; reload for the latest" },
};

/**
 * The run page: header with Stop, live timelines, the summary, the percentile spectrum, per-agent
 * breakdown and exports. `shared`: a run opened through a share link, maybe of another org than
 * the member's active one, shown read-only from what the server loaded (no Stop, no live feed,
 * nothing that would act in the active org).
 */
export function RunView({
  initialRun,
  initialPoints,
  planYaml,
  shared,
}: {
  initialRun: Run;
  /** The timeline as packedPointsJson wrote it. */
  initialPoints: string;
  /** The plan as YAML, written by the server: the YAML library stays out of the page's JavaScript. */
  planYaml: string;
  shared?: { analysis: RunAnalysis };
}) {
  const initialIntervals = useMemo(() => unpackPoints(JSON.parse(initialPoints) as PackedPoints), [initialPoints]);
  const { run, intervals, mode, error: pollError, refresh } = useLiveRun(initialRun, initialIntervals, { live: !shared });
  const [stopState, setStopState] = useState<{ kind: "idle" | "stopping" } | { kind: "error"; message: string }>({ kind: "idle" });
  const [now, setNow] = useState(() => Date.now());
  const final = isFinal(run.status);
  useEffect(() => {
    if (final) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [final]);

  const stop = async () => {
    // One click must not end a long test by accident: say what stopping does, and ask.
    if (!window.confirm(`Stop "${run.name}"? Its agents stop sending now; what was measured so far is kept and the run ends as aborted.`)) return;
    setStopState({ kind: "stopping" });
    try {
      await apiFetch<AbortResponse>(`/api/v1/runs/${run.id}/abort`, { method: "POST" });
      await refresh().catch(() => {});
    } catch (err) {
      // 409: it ended on its own meanwhile; show the final state instead of an error.
      if (err instanceof ApiRequestError && err.status === 409) await refresh().catch(() => {});
      else setStopState({ kind: "error", message: err instanceof Error ? err.message : String(err) });
    }
  };

  const plan = run.plan;
  const elapsed = durationBetween(run.startedAt, run.endedAt, now);
  const showReason = run.reason && run.status !== "passed";

  return (
    <>
      <div className="page-head run-head">
        <div className="run-title">
          <div className="crumbs">
            <Link href="/">Runs</Link> / <span className="mono">{run.id}</span>
          </div>
          <h1>
            {run.name} <StatusBadge status={run.status} large />
            {mode !== "ended" && (
              <span className={`live-mode live-mode-${mode}`} title={MODE_LABEL[mode].title} data-testid="live-mode" data-mode={mode}>
                {MODE_LABEL[mode].text}
              </span>
            )}
          </h1>
          <div className="facts">
            <span>
              <span className="mono">{plan.target.url}</span> ({plan.target.protocol})
            </span>
            <span data-testid="plan-connections">{describeConnections(plan)}</span>
            <span>
              {describeScenario(plan)}
              {durationMs(plan.scenario.warmup) > 0 && ` (${fmtDuration(durationMs(plan.scenario.warmup))} warm-up)`}
            </span>
          </div>
          <div className="facts subtle">
            <span suppressHydrationWarning>Created {fmtDateTime(run.createdAt)}</span>
            {run.startedAt && <span suppressHydrationWarning>started {fmtDateTime(run.startedAt)}</span>}
            {run.endedAt && <span suppressHydrationWarning>ended {fmtDateTime(run.endedAt)}</span>}
            {elapsed !== null && (
              <span suppressHydrationWarning>
                {final ? "took" : "running for"} {fmtDuration(elapsed)}
              </span>
            )}
          </div>
        </div>
        <div className="run-actions">
          {!final && !shared && (
            <button type="button" className="button danger" onClick={() => void stop()} disabled={stopState.kind === "stopping"}>
              {stopState.kind === "stopping" ? "Stopping…" : "Stop run"}
            </button>
          )}
          {final && !shared && (
            <>
              <Link href={`/compare?runs=${run.id}`} className="button">
                Compare…
              </Link>
              <Link href="/runs/new" className="button">
                New run
              </Link>
            </>
          )}
        </div>
      </div>

      {run.status === "queued" && (
        <div className="banner banner-warn" role="status" data-testid="queue-position">
          {run.queue
            ? `Waiting for an agent — position ${run.queue.position} in queue (pool '${run.queue.pool}'${run.queue.ahead > 0 ? `, ${run.queue.ahead} run${run.queue.ahead === 1 ? "" : "s"} ahead` : ", next"})`
            : "Waiting for an agent"}
          {plan.agents.maxWait !== undefined && `; gives up after ${fmtDuration(durationMs(plan.agents.maxWait))} (agents.maxWait)`}
        </div>
      )}
      {showReason && (
        <div className={`banner banner-${run.status}`} role="status">
          <strong>
            {run.status === "failed"
              ? "Failed: "
              : run.status === "errored"
                ? "Errored: "
                : run.status === "aborted"
                  ? "Aborted: "
                  : run.status === "degraded"
                    ? "Degraded: "
                    : run.status === "inconclusive"
                      ? "Inconclusive: "
                      : ""}
          </strong>
          <ReasonText reason={run.reason!} />
        </div>
      )}
      {stopState.kind === "error" && (
        <div className="banner banner-errored" role="alert">
          Could not stop the run: {stopState.message}
        </div>
      )}
      {pollError && !final && (
        <div className="banner banner-warn" role="status">
          Live updates paused — {pollError}. Retrying every second.
        </div>
      )}

      {!shared && <RunLiveControl run={run} intervals={intervals} now={now} onChanged={refresh} />}

      <RunHeadline run={run} intervals={intervals} />

      <RunCharts run={run} intervals={intervals} />

      <SweepPanel run={run} />

      <ReconnectStormPanel run={run} />

      <SummaryTables run={run} />

      <RunAnalysisPanels runId={run.id} final={final} storedPoints={intervals.length} loaded={shared?.analysis} />

      <RunExports run={run} intervals={intervals} shared={shared !== undefined} />

      <details className="panel plan-doc">
        <summary>Plan</summary>
        <pre className="code-block">{planYaml}</pre>
      </details>
    </>
  );
}

/**
 * A reason is one sentence per cause, joined by "; ". Long ones (several failed thresholds) show the
 * first causes and fold the rest, so the banner stays a banner; the summary's thresholds table
 * has every detail.
 */
function ReasonText({ reason }: { reason: string }) {
  const parts = reason.split("; ");
  if (reason.length <= 240 || parts.length < 2) return <>{reason.length > 400 ? `${reason.slice(0, 400)}…` : reason}</>;
  let shown = 0;
  let length = 0;
  while (shown < parts.length && (shown === 0 || length + parts[shown]!.length < 240)) length += parts[shown++]!.length + 2;
  return (
    <>
      {parts.slice(0, shown).join("; ")}
      {shown < parts.length && (
        <details className="reason-more">
          <summary>and {parts.length - shown} more</summary>
          {parts.slice(shown).join("; ")}
        </details>
      )}
    </>
  );
}
