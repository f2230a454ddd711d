"use client";

import type { IntervalPoint, RunWithMeta } from "@volley/contracts";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useState } from "react";
import { apiFetch } from "../lib/api-client";
import { fmtMs, fmtRate } from "../lib/format";
import { CURVE_COLORS } from "../lib/sweep-curves";
import type { RunListItem } from "../lib/types";
import { filterParams, NO_FILTERS, type RunFilterValues } from "../lib/run-filter-values";
import { CompareTable } from "./compare-table";
import { RunFilters } from "./run-filters";
import { StatusBadge } from "./status-badge";
import { SweepChart } from "./sweep-chart";
import { TimelineChart, type ChartSeries } from "./timeline-chart";

type Loaded = { run: RunWithMeta; intervals: IntervalPoint[] };
type Page = { runs: RunListItem[]; next: string | null };

const PICKER_PAGE = 20;

/**
 * Runs side by side: a picker (search, filters, pages) to choose them, a table of their numbers
 * with deltas against a reference run (the plan's baseline when it is among them), their
 * timelines overlaid on seconds since each run's start, and their sweep curves together.
 */
export function CompareView({
  plans,
  selected,
  initialFilters = NO_FILTERS,
}: {
  plans: { id: string; name: string }[];
  selected: string[];
  initialFilters?: RunFilterValues;
}) {
  const router = useRouter();
  const [loaded, setLoaded] = useState<Record<string, Loaded>>({});
  const [error, setError] = useState<string | null>(null);
  const [filters, setFilters] = useState(initialFilters);
  // Cursors of the pages seen so far: [undefined] is the first page; back pops one.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<Page | null>(null);
  const [reference, setReference] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    const p = filterParams(filters);
    p.set("limit", String(PICKER_PAGE));
    const cursor = cursors.at(-1);
    if (cursor) p.set("cursor", cursor);
    apiFetch<Page>(`/api/v1/runs?${p.toString()}`)
      .then((r) => live && (setPage(r), setError(null)))
      .catch((err: unknown) => live && setError(err instanceof Error ? err.message : String(err)));
    return () => {
      live = false;
    };
  }, [filters, cursors]);

  useEffect(() => {
    let live = true;
    const missing = selected.filter((id) => !loaded[id]);
    if (missing.length === 0) return;
    Promise.all(
      missing.map(async (id) => {
        const [run, iv] = await Promise.all([
          apiFetch<RunWithMeta>(`/api/v1/runs/${id}`),
          apiFetch<{ intervals: IntervalPoint[] }>(`/api/v1/runs/${id}/intervals`),
        ]);
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
  const applyFilters = (f: RunFilterValues) => {
    setFilters(f);
    setCursors([undefined]);
  };

  const runs = selected.map((id) => loaded[id]).filter((r): r is Loaded => r !== undefined);
  const overlay = useMemo(() => {
    const length = Math.max(0, ...runs.map((r) => r.intervals.length));
    const x = Array.from({ length }, (_, i) => i);
    const col = (r: Loaded, f: (p: IntervalPoint) => number | null) => x.map((i) => (r.intervals[i] ? f(r.intervals[i]!) : null));
    // Runs of one plan share a name: the label adds when each started.
    const name = (r: Loaded) => `${r.run.name} · ${new Date(r.run.startedAt ?? r.run.createdAt).toLocaleTimeString()}`;
    // Off the chart, each legend shows its run's own figure (the summary's, merged from histograms).
    const latency: ChartSeries[] = runs.map((r, n) => ({
      label: `${name(r)} p95`,
      values: col(r, (p) => p.p95),
      color: CURVE_COLORS[n % CURVE_COLORS.length]!,
      format: fmtMs,
      runValue: r.run.summary && fmtMs(r.run.summary.latency.p95),
    }));
    const rate: ChartSeries[] = runs.map((r, n) => ({
      label: `${name(r)} received/s`,
      values: col(r, (p) => p.received),
      color: CURVE_COLORS[n % CURVE_COLORS.length]!,
      format: fmtRate,
      runValue: r.run.summary && `${fmtRate(r.run.summary.messages.receiveRate)} avg`,
    }));
    return { x, latency, rate, none: x.map(() => false) };
  }, [runs]);

  return (
    <div className="compare">
      <section className="panel">
        <h2 className="panel-title">Runs to compare</h2>
        <RunFilters value={filters} plans={plans} onApply={applyFilters} compact />
        {page === null ? (
          <p className="small muted">Loading runs…</p>
        ) : page.runs.length === 0 ? (
          <p className="small muted">
            {Object.values(filters).some(Boolean)
              ? "No runs match these filters."
              : "No runs yet: start two runs (the same plan, or different servers) and compare them here."}
          </p>
        ) : (
          <ul className="compare-picker small" data-testid="compare-picker">
            {page.runs.map((c) => (
              <li key={c.id}>
                <label>
                  <input type="checkbox" checked={selected.includes(c.id)} onChange={() => toggle(c.id)} data-run={c.id} /> {c.name}{" "}
                  <StatusBadge status={c.status} /> {c.baseline && <span className="badge baseline-badge">baseline</span>}{" "}
                  {c.tags.map((t) => (
                    <span key={t} className="tag-chip">
                      {t}
                    </span>
                  ))}{" "}
                  <span className="subtle">{new Date(c.createdAt).toLocaleString()}</span>
                </label>
              </li>
            ))}
          </ul>
        )}
        <nav className="pager small" aria-label="Pages of runs">
          {cursors.length > 1 && (
            <button type="button" className="button ghost" onClick={() => setCursors((c) => c.slice(0, -1))}>
              ← Newer
            </button>
          )}
          {page?.next && (
            <button type="button" className="button ghost" onClick={() => setCursors((c) => [...c, page.next!])} data-testid="picker-next">
              Older →
            </button>
          )}
        </nav>
      </section>
      {error && (
        <div className="panel panel-error" role="alert">
          <p className="panel-message">{error}</p>
        </div>
      )}
      {runs.length > 0 && (
        <section className="panel">
          <h2 className="panel-title">Side by side</h2>
          {versionsDiffer(runs.map((r) => r.run)) && (
            <p className="callout warn small" data-testid="versions-differ">
              These runs ran different versions of the same plan ({versionList(runs.map((r) => r.run))}): a difference may be the plan&apos;s, not the
              server&apos;s.
            </p>
          )}
          {runs.some((r) => (r.run.rateChanges?.length ?? 0) > 0) && (
            <p className="callout warn small" data-testid="rate-changed">
              {runs
                .filter((r) => (r.run.rateChanges?.length ?? 0) > 0)
                .map((r) => r.run.name)
                .join(", ")}{" "}
              had its rate or connections changed while it ran: its figures are not those of its plan&apos;s constant load.
            </p>
          )}
          <CompareTable
            columns={runs.map((r) => ({
              id: r.run.id,
              label: `${r.run.name}${r.run.planVersion !== null ? ` (plan v${r.run.planVersion})` : ""} · ${new Date(r.run.startedAt ?? r.run.createdAt).toLocaleString()}`,
              summary: r.run.summary,
              baseline: r.run.baseline,
            }))}
            referenceId={reference ?? runs.find((r) => r.run.baseline)?.run.id ?? runs[0]!.run.id}
            onReference={setReference}
          />
        </section>
      )}
      {runs.length > 0 && (
        <section className="charts" data-testid="compare-charts" data-runs={runs.length}>
          <div className="panel chart-panel">
            <h2 className="panel-title">Latency p95 (ms) by second since start</h2>
            <TimelineChart x={overlay.x} series={overlay.latency} yLabel="ms" warmup={overlay.none} saturated={overlay.none} syncKey="compare" height={220} />
          </div>
          <div className="panel chart-panel">
            <h2 className="panel-title">Messages received per second</h2>
            <TimelineChart
              x={overlay.x}
              series={overlay.rate}
              yLabel="messages/s"
              warmup={overlay.none}
              saturated={overlay.none}
              syncKey="compare"
              height={220}
            />
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

/** Runs of one saved plan whose recorded versions are not all the same. */
function versionsDiffer(runs: RunWithMeta[]): boolean {
  const known = runs.filter((r) => r.planId !== null && r.planVersion !== null);
  return new Set(known.map((r) => r.planId)).size === 1 && new Set(known.map((r) => r.planVersion)).size > 1;
}

function versionList(runs: RunWithMeta[]): string {
  return [...new Set(runs.map((r) => r.planVersion).filter((v): v is number => v !== null))]
    .sort((a, b) => a - b)
    .map((v) => `v${v}`)
    .join(", ");
}
