import type { Logger } from "pino";
import { pushTimeseries } from "prometheus-remote-write";
import { RUN_SERIES, type IntervalPoint } from "@volley/contracts";
import type { ResolveAll } from "@volley/contracts/public-lookup";
import { getRunOfAnyOrg, loadMetricsExport, recordMetricsExportPush, type Db, type MetricsExportConfig, type SecretKeys } from "@volley/db";
import { errorMessage } from "../util/wait";
import { remoteWriteFetch } from "./remote-write-fetch";

export interface RunMetricsExporterDeps {
  db: Db;
  log: Logger;
  secretsKeys: SecretKeys | null;
  publicOnly: boolean;
  resolveAll?: ResolveAll;
  /** A second is pushed once the run's newest second is this many ahead (its late frames are in by then). */
  settleSeconds?: number;
  timeoutMs?: number;
  /** How long an org's export settings are reused before they are read again. */
  configTtlMs?: number;
  onPush?(outcome: "ok" | "failed"): void;
}

interface RunState {
  orgId: string;
  labels: Record<string, string>;
  /** The newest version of each second not pushed yet (a second is updated while its frames arrive). */
  pending: Map<number, IntervalPoint>;
  /** Seconds at or below this were pushed: a remote-write receiver refuses a second sample for one timestamp. */
  pushedThrough: number;
  busy: Promise<void> | null;
}

/** Seconds kept for a receiver that is down, then dropped (the run's own record is unaffected). */
const MAX_PENDING = 300;

/**
 * Pushes every second of a run to its org's Prometheus remote-write endpoint, if the org set one
 * (Settings → Metrics export). Fed the merged per-second points the live feed computes, it pushes a
 * second once it has settled (later seconds exist) and the rest when the run ends, each exactly
 * once, timestamped at the interval's start. Best effort: a failing receiver is recorded on the
 * export (last status and error) and never touches the run.
 */
export class RunMetricsExporter {
  private readonly runs = new Map<string, Promise<RunState | null>>();
  /** Runs that ended lately: points restated after the end are not pushed again (a receiver keeps the first sample of a timestamp). */
  private readonly ended = new Set<string>();
  private readonly configs = new Map<string, { at: number; config: MetricsExportConfig | null }>();

  constructor(private readonly deps: RunMetricsExporterDeps) {}

  /** New or updated merged seconds of a run. */
  points(runId: string, points: IntervalPoint[]): void {
    void this.take(runId, points, false);
  }

  /** The run ended: push what is left and forget it. */
  finished(runId: string): Promise<void> {
    return this.take(runId, [], true);
  }

  private async take(runId: string, points: IntervalPoint[], final: boolean): Promise<void> {
    if (this.ended.has(runId)) return;
    try {
      const state = await this.state(runId);
      if (!state) {
        if (final) this.end(runId);
        return;
      }
      for (const p of points) if (p.index > state.pushedThrough) state.pending.set(p.index, p);
      while (state.busy) await state.busy;
      state.busy = this.flush(runId, state, final).finally(() => (state.busy = null));
      await state.busy;
      if (final) this.end(runId);
    } catch (err) {
      this.deps.log.warn({ runId, err: errorMessage(err) }, "could not export run metrics");
    }
  }

  private end(runId: string): void {
    this.runs.delete(runId);
    this.ended.add(runId);
    if (this.ended.size > 1000) this.ended.delete(this.ended.values().next().value!);
  }

  private async state(runId: string): Promise<RunState | null> {
    let known = this.runs.get(runId);
    // One lookup per run, shared by calls that arrive while it is in flight.
    if (!known) this.runs.set(runId, (known = this.newState(runId)));
    const state = await known;
    return state && (await this.config(state.orgId)) ? state : null;
  }

  private async newState(runId: string): Promise<RunState | null> {
    const run = await getRunOfAnyOrg(this.deps.db, runId);
    if (!run) return null;
    // A new run reads its org's setting as it is now, so an export saved a moment ago takes this run.
    await this.config(run.orgId, true);
    return {
      orgId: run.orgId,
      labels: { run_id: run.id, run_name: run.plan.name, plan_id: run.planId ?? "", org: run.orgId },
      pending: new Map(),
      pushedThrough: -1,
      busy: null,
    };
  }

  private async config(orgId: string, fresh = false): Promise<MetricsExportConfig | null> {
    const cached = this.configs.get(orgId);
    if (cached && !fresh && Date.now() - cached.at < (this.deps.configTtlMs ?? 30_000)) return cached.config;
    const loaded = await loadMetricsExport(this.deps.db, orgId, this.deps.secretsKeys);
    const config = loaded?.enabled ? loaded : null;
    this.configs.set(orgId, { at: Date.now(), config });
    return config;
  }

  private async flush(runId: string, state: RunState, final: boolean): Promise<void> {
    const config = await this.config(state.orgId);
    if (!config || state.pending.size === 0) return;
    const newest = Math.max(...state.pending.keys());
    const settle = this.deps.settleSeconds ?? 2;
    const due = [...state.pending.values()].filter((p) => final || p.index <= newest - settle).sort((a, b) => a.index - b.index);
    if (due.length === 0) return;
    const series = new Map<string, { labels: Record<string, string> & { __name__: string }; samples: { value: number; timestamp: number }[] }>();
    for (const p of due) {
      for (const s of RUN_SERIES) {
        const value = s.value(p);
        if (value === null) continue;
        const key = `${s.name}${JSON.stringify(s.labels ?? {})}`;
        let entry = series.get(key);
        if (!entry) series.set(key, (entry = { labels: { ...s.labels, __name__: s.name }, samples: [] }));
        entry.samples.push({ value, timestamp: p.t });
      }
    }
    let status = 0;
    let error: string | null = null;
    try {
      const answer = await pushTimeseries([...series.values()], {
        url: config.url,
        labels: { ...config.labels, ...state.labels },
        headers: {
          "content-encoding": "snappy",
          "x-prometheus-remote-write-version": "0.1.0",
          ...(config.authorization ? { authorization: config.authorization } : {}),
        },
        fetch: remoteWriteFetch({ publicOnly: this.deps.publicOnly, resolveAll: this.deps.resolveAll, timeoutMs: this.deps.timeoutMs ?? 5000 }),
      });
      status = answer.status;
      if (status < 200 || status >= 300) error = `answered ${status} ${answer.statusText}: ${(answer.errorMessage ?? "").trim().slice(0, 500)}`;
    } catch (err) {
      error = `POST failed: ${errorMessage(err)}`;
    }
    if (error === null) {
      for (const p of due) state.pending.delete(p.index);
      state.pushedThrough = Math.max(state.pushedThrough, due.at(-1)!.index);
    } else {
      // Kept for the next push; a receiver down for long loses the oldest seconds, not the hub's memory.
      const keep = [...state.pending.keys()].sort((a, b) => b - a).slice(MAX_PENDING);
      for (const i of keep) state.pending.delete(i);
      this.deps.log.warn({ runId, url: config.url, err: error }, "run metrics push failed");
    }
    this.deps.onPush?.(error === null ? "ok" : "failed");
    await recordMetricsExportPush(this.deps.db, state.orgId, { status, error }).catch(() => undefined);
  }
}
