"use client";

import { durationMs, FINAL_RUN_STATUSES, type IntervalPoint, type Run } from "@volley/contracts";
import Link from "next/link";
import { useCallback, useEffect, useMemo, useState } from "react";
import { stringify } from "yaml";
import { ApiRequestError, apiFetch } from "../lib/api-client";
import { durationBetween, fmtDateTime, fmtDuration, fmtInt, fmtMs, fmtRate } from "../lib/format";
import type { AbortResponse } from "../lib/types";
import { StatusBadge } from "./status-badge";
import { SummaryTables } from "./summary-tables";
import { TimelineChart, type ChartSeries } from "./timeline-chart";

const POLL_MS = 1000;
const isFinal = (s: Run["status"]) => FINAL_RUN_STATUSES.includes(s);

const fmtMsOrDash = (v: number | null) => fmtMs(v);
const fmtPerSecond = (v: number | null) => fmtRate(v);
const fmtCount = (v: number | null) => fmtInt(v);

/** The run page: header, live charts and the summary; polls the API every second until the run is final. */
export function RunView({ initialRun, initialIntervals }: { initialRun: Run; initialIntervals: IntervalPoint[] }) {
  const [run, setRun] = useState(initialRun);
  const [intervals, setIntervals] = useState(initialIntervals);
  const [pollError, setPollError] = useState<string | null>(null);
  const [stopState, setStopState] = useState<{ kind: "idle" | "stopping" } | { kind: "error"; message: string }>({ kind: "idle" });
  const [now, setNow] = useState(() => Date.now());
  const final = isFinal(run.status);

  const refresh = useCallback(async () => {
    const [r, i] = await Promise.all([
      apiFetch<Run>(`/api/v1/runs/${run.id}`),
      apiFetch<{ intervals: IntervalPoint[] }>(`/api/v1/runs/${run.id}/intervals`),
    ]);
    setRun(r);
    setIntervals(i.intervals);
    setNow(Date.now());
    return r;
  }, [run.id]);

  useEffect(() => {
    if (final) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const r = await refresh();
        if (cancelled) return;
        setPollError(null);
        if (isFinal(r.status)) return;
      } catch (err) {
        if (cancelled) return;
        setPollError(err instanceof Error ? err.message : String(err));
      }
      if (!cancelled) timer = setTimeout(() => void tick(), POLL_MS);
    };
    timer = setTimeout(() => void tick(), POLL_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [final, refresh]);

  const stop = async () => {
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
  const planYaml = useMemo(() => stringify(plan), [plan]);
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
          </h1>
          <div className="facts">
            <span>
              <span className="mono">{plan.target.url}</span> ({plan.target.protocol})
            </span>
            <span>
              {fmtInt(plan.connections.count)} connections at {fmtInt(plan.connections.rate)}/s
            </span>
            <span>
              {plan.scenario.kind}, {fmtInt(plan.scenario.message.rate)} msg/s {plan.scenario.message.per === "connection" ? "per connection" : "total"} for{" "}
              {fmtDuration(durationMs(plan.scenario.duration))}
              {durationMs(plan.scenario.warmup) > 0 && ` (${fmtDuration(durationMs(plan.scenario.warmup))} warm-up)`}
            </span>
          </div>
          <div className="facts subtle">
            <span suppressHydrationWarning>Created {fmtDateTime(run.createdAt)}</span>
            {run.startedAt && <span suppressHydrationWarning>started {fmtDateTime(run.startedAt)}</span>}
            {run.endedAt && <span suppressHydrationWarning>ended {fmtDateTime(run.endedAt)}</span>}
            {elapsed !== null && <span suppressHydrationWarning>{final ? "took" : "running for"} {fmtDuration(elapsed)}</span>}
          </div>
        </div>
        <div className="run-actions">
          {!final && (
            <button type="button" className="button danger" onClick={() => void stop()} disabled={stopState.kind === "stopping"}>
              {stopState.kind === "stopping" ? "Stopping…" : "Stop run"}
            </button>
          )}
          {final && (
            <Link href="/runs/new" className="button">
              New run
            </Link>
          )}
        </div>
      </div>

      {showReason && (
        <div className={`banner banner-${run.status}`} role="status">
          <strong>{run.status === "failed" ? "Failed: " : run.status === "errored" ? "Errored: " : run.status === "aborted" ? "Aborted: " : ""}</strong>
          {run.reason}
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

      <Charts run={run} intervals={intervals} />

      <SummaryTables run={run} />

      <details className="panel plan-doc">
        <summary>Plan</summary>
        <pre className="code-block">{planYaml}</pre>
      </details>
    </>
  );
}

function Charts({ run, intervals }: { run: Run; intervals: IntervalPoint[] }) {
  const data = useMemo(() => {
    const start = intervals[0]?.index ?? 0;
    return {
      x: intervals.map((p) => p.index - start),
      warmup: intervals.map((p) => p.warmup),
      saturated: intervals.map((p) => p.saturated),
    };
  }, [intervals]);

  if (intervals.length === 0) {
    const message =
      run.status === "queued"
        ? "Waiting for a hub to pick up this run. Charts appear with the first measured second."
        : run.status === "running"
          ? "The run has started; the first interval arrives about a second after the load begins."
          : `No measurements were recorded: the run ended (${run.status}) before any interval was stored.${run.reason ? " See the reason above." : ""}`;
    return (
      <div className={`panel charts-empty${isFinal(run.status) ? "" : " waiting"}`}>
        {!isFinal(run.status) && <span className="spinner" aria-hidden="true" />}
        <p>{message}</p>
      </div>
    );
  }

  const latency: ChartSeries[] = [
    { label: "p50", values: intervals.map((p) => p.p50), color: "#2563eb", format: fmtMsOrDash },
    { label: "p95", values: intervals.map((p) => p.p95), color: "#d97706", format: fmtMsOrDash },
    { label: "p99", values: intervals.map((p) => p.p99), color: "#dc2626", format: fmtMsOrDash },
    { label: "max", values: intervals.map((p) => p.max), color: "#6b7280", dash: [4, 4], width: 1, hidden: true, format: fmtMsOrDash },
  ];
  const throughput: ChartSeries[] = [
    { label: "sent/s", values: intervals.map((p) => p.sent), color: "#2563eb", format: fmtPerSecond },
    { label: "received/s", values: intervals.map((p) => p.received), color: "#16a34a", format: fmtPerSecond },
    { label: "errors/s", values: intervals.map((p) => p.errors), color: "#dc2626", width: 1, format: fmtPerSecond },
    { label: "connections", values: intervals.map((p) => p.connections), color: "#7c3aed", axis: "right", width: 1.25, fill: "rgba(124, 58, 237, 0.06)", format: fmtCount },
  ];
  const anyWarmup = data.warmup.some(Boolean);
  const anySaturated = data.saturated.some(Boolean);

  return (
    <section className="charts">
      <div className="panel chart-panel">
        <h2 className="panel-title">Latency (ms, from intended send time)</h2>
        <TimelineChart x={data.x} series={latency} yLabel="ms" warmup={data.warmup} saturated={data.saturated} />
      </div>
      <div className="panel chart-panel">
        <h2 className="panel-title">Messages per second and connections</h2>
        <TimelineChart x={data.x} series={throughput} yLabel="messages/s" y2Label="connections" warmup={data.warmup} saturated={data.saturated} />
      </div>
      {(anyWarmup || anySaturated) && (
        <p className="chart-key small subtle">
          {anyWarmup && (
            <span>
              <span className="key-warmup" /> warm-up (left out of the summary)
            </span>
          )}
          {anySaturated && (
            <span>
              <span className="key-saturated" /> agent saturated (its own CPU or send lag was the bottleneck)
            </span>
          )}
        </p>
      )}
    </section>
  );
}
