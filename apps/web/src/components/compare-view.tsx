"use client";

import type { IntervalPoint, Run } from "@volley/contracts";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useState } from "react";
import { apiFetch } from "../lib/api-client";
import { fmtMs, fmtRate } from "../lib/format";
import { CURVE_COLORS } from "../lib/sweep-curves";
import type { RunListItem } from "../lib/types";
import { StatusBadge } from "./status-badge";
import { SweepChart } from "./sweep-chart";
import { TimelineChart, type ChartSeries } from "./timeline-chart";

type Loaded = { run: Run; intervals: IntervalPoint[] };

/** Several runs' timelines overlaid on seconds since each run's start, and their sweep curves together. */
export function CompareView({ candidates, selected }: { candidates: RunListItem[]; selected: string[] }) {
  const router = useRouter();
  const [loaded, setLoaded] = useState<Record<string, Loaded>>({});
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    const missing = selected.filter((id) => !loaded[id]);
    if (missing.length === 0) return;
    Promise.all(
      missing.map(async (id) => {
        const [run, iv] = await Promise.all([apiFetch<Run>(`/api/v1/runs/${id}`), apiFetch<{ intervals: IntervalPoint[] }>(`/api/v1/runs/${id}/intervals`)]);
        return [id, { run, intervals: iv.intervals }] as const;
      }),
    )
      .then((entries) => live && setLoaded((prev) => ({ ...prev, ...Object.fromEntries(entries) })))
      .catch((err: unknown) => live && setError(err instanceof Error ? err.message : String(err)));
    return () => {
      live = false;
    };
  }, [selected, loaded]);

  const toggle = (id: string) => {
    const next = selected.includes(id) ? selected.filter((s) => s !== id) : [...selected, id];
    router.replace(`/compare?runs=${next.join(",")}`, { scroll: false });
  };

  const runs = selected.map((id) => loaded[id]).filter((r): r is Loaded => r !== undefined);
  const overlay = useMemo(() => {
    const length = Math.max(0, ...runs.map((r) => r.intervals.length));
    const x = Array.from({ length }, (_, i) => i);
    const col = (r: Loaded, f: (p: IntervalPoint) => number | null) => x.map((i) => (r.intervals[i] ? f(r.intervals[i]!) : null));
    // Runs of one plan share a name: the label adds when each started.
    const name = (r: Loaded) => `${r.run.name} · ${new Date(r.run.startedAt ?? r.run.createdAt).toLocaleTimeString()}`;
    const latency: ChartSeries[] = runs.map((r, n) => ({ label: `${name(r)} p95`, values: col(r, (p) => p.p95), color: CURVE_COLORS[n % CURVE_COLORS.length]!, format: fmtMs }));
    const rate: ChartSeries[] = runs.map((r, n) => ({ label: `${name(r)} received/s`, values: col(r, (p) => p.received), color: CURVE_COLORS[n % CURVE_COLORS.length]!, format: fmtRate }));
    return { x, latency, rate, none: x.map(() => false) };
  }, [runs]);

  return (
    <div className="compare">
      <section className="panel">
        <h2 className="panel-title">Runs to compare</h2>
        {candidates.length === 0 ? (
          <p className="small muted">No runs yet: start two runs (the same plan, or different servers) and compare them here.</p>
        ) : (
          <ul className="compare-picker small">
            {candidates.map((c) => (
              <li key={c.id}>
                <label>
                  <input type="checkbox" checked={selected.includes(c.id)} onChange={() => toggle(c.id)} data-run={c.id} /> {c.name} <StatusBadge status={c.status} />{" "}
                  <span className="subtle">{new Date(c.createdAt).toLocaleString()}</span>
                </label>
              </li>
            ))}
          </ul>
        )}
      </section>
      {error && (
        <div className="panel panel-error" role="alert">
          <p className="panel-message">{error}</p>
        </div>
      )}
      {runs.length > 0 && (
        <section className="charts" data-testid="compare-charts" data-runs={runs.length}>
          <div className="panel chart-panel">
            <h2 className="panel-title">Latency p95 (ms) by second since start</h2>
            <TimelineChart x={overlay.x} series={overlay.latency} yLabel="ms" warmup={overlay.none} saturated={overlay.none} syncKey="compare" height={220} />
          </div>
          <div className="panel chart-panel">
            <h2 className="panel-title">Messages received per second</h2>
            <TimelineChart x={overlay.x} series={overlay.rate} yLabel="messages/s" warmup={overlay.none} saturated={overlay.none} syncKey="compare" height={220} />
          </div>
          <div className="panel chart-panel">
            <h2 className="panel-title">Latency vs messages per second</h2>
            <SweepChart runs={runs.map((r) => r.run)} />
          </div>
        </section>
      )}
    </div>
  );
}
