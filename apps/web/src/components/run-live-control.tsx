"use client";

import { connectionsControlRefusal, planRate, rateControlRefusal, type IntervalPoint, type RateChangeBody, type RateChange, type Run } from "@volley/contracts";
import { useState } from "react";
import { ApiRequestError, apiFetch } from "../lib/api-client";
import { describeRateChange } from "../lib/rate-markers";
import { runProgress } from "../lib/run-progress";

type SendState = { kind: "idle" | "sending" } | { kind: "error"; message: string };

/**
 * A running run's progress (time sent of the planned, time left) and, where its plan allows, its
 * live control, as Locust's live edit: the rate in the plan's unit (users: arrivals per second) and
 * the connections open at once, each settable or back to the plan's. Every agent applies a change
 * a second after it is asked for; the timelines mark it, and the list says who made it.
 */
export function RunLiveControl({ run, intervals, now, onChanged }: { run: Run; intervals: IntervalPoint[]; now: number; onChanged: () => Promise<unknown> }) {
  const progress = runProgress(run, intervals, now);
  const changes = run.rateChanges ?? [];
  const [state, setState] = useState<SendState>({ kind: "idle" });
  if (!progress && changes.length === 0) return null;

  const list = changes.length > 0 && (
    <ol className="rate-changes small" data-testid="rate-changes">
      {changes.map((c) => (
        <li key={c.at} suppressHydrationWarning>
          {new Date(c.at).toLocaleTimeString()} {describeRateChange(c)} <span className="subtle">by {c.by}</span>
        </li>
      ))}
    </ol>
  );
  if (!progress)
    return (
      <section className="panel live-control" data-testid="live-control" aria-label="Live changes">
        <h2 className="panel-title">Changed while it ran</h2>
        {list}
      </section>
    );

  const send = async (body: RateChangeBody) => {
    setState({ kind: "sending" });
    try {
      await apiFetch<{ change: RateChange }>(`/api/v1/runs/${run.id}/rate`, { method: "POST", body: JSON.stringify(body) });
      setState({ kind: "idle" });
      await onChanged().catch(() => {});
    } catch (err) {
      setState({ kind: "error", message: err instanceof ApiRequestError || err instanceof Error ? err.message : String(err) });
    }
  };
  const rate = planRate(run.plan);
  const rateRefusal = rateControlRefusal(run.plan);
  const connectionsRefusal = connectionsControlRefusal(run.plan);
  const latest = (connections: boolean) => changes.findLast((c) => (c.unit === "connections") === connections)?.rate;

  return (
    <section className="panel live-control" data-testid="live-control" aria-label="Progress and live control">
      <div className="live-progress">
        <progress max={1} value={progress.fraction} aria-label="Planned sending time done" />
        <span className="small" data-testid="run-progress">
          {progress.text} <span className="subtle">({progress.tail})</span>
        </span>
      </div>
      {rateRefusal ? (
        <p className="small subtle">Live rate control is not available for this plan: {rateRefusal}.</p>
      ) : (
        <LiveField
          what="rate"
          label="Rate"
          unit={rate.unit}
          planned={rate.rate}
          current={latest(false) ?? rate.rate}
          busy={state.kind === "sending"}
          onSet={(v) => send(v === rate.rate && latest(false) !== undefined ? { scale: 1 } : { rate: v })}
        />
      )}
      {!connectionsRefusal && (
        <LiveField
          what="connections"
          label="Connections"
          unit="connections"
          planned={run.plan.connections.count}
          current={latest(true) ?? run.plan.connections.count}
          busy={state.kind === "sending"}
          onSet={(v) => send({ connections: v })}
        />
      )}
      {state.kind === "error" && (
        <p className="small bad" role="alert">
          Could not change the run: {state.message}
        </p>
      )}
      {list}
    </section>
  );
}

/** One live setting: its value now, a field to set it (whole connections, any positive rate) and a way back to the plan's. */
function LiveField(props: { what: string; label: string; unit: string; planned: number; current: number; busy: boolean; onSet: (v: number) => Promise<void> }) {
  const { what, label, unit, planned, current, busy, onSet } = props;
  const [value, setValue] = useState(String(current));
  const [error, setError] = useState<string | null>(null);
  const set = (v: number) => {
    // A jump to several times the current load hits the server at once: say so and ask.
    if (v > 2 * current && !window.confirm(`Raise ${what} from ${current} to ${v} ${unit}? Every agent changes a second from now.`)) return;
    setError(null);
    void onSet(v);
  };
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const v = Number(value);
    const whole = what === "connections";
    if (!Number.isFinite(v) || v <= 0 || (whole && !Number.isInteger(v)))
      return setError(`${what}: give ${whole ? "a whole number" : "a number"} above 0 (${unit})`);
    set(v);
  };
  return (
    <form className="rate-control" onSubmit={submit} data-testid={`live-${what}`}>
      <label className="small">
        {label} now <strong data-testid={`current-${what}`}>{current.toLocaleString("en-US")}</strong>
        {unit === "connections" ? "" : ` ${unit}`}; set to{" "}
        <input
          type="number"
          name={what}
          min="0"
          step={what === "connections" ? 1 : "any"}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          aria-label={`New ${what} (${unit})`}
          className="rate-input"
        />{" "}
        {unit}
      </label>
      <button type="submit" className="button" disabled={busy}>
        {busy ? "Setting…" : `Set ${what}`}
      </button>
      {current !== planned && (
        <button type="button" className="button" disabled={busy} onClick={() => set(planned)}>
          Back to the plan's {planned.toLocaleString("en-US")}
        </button>
      )}
      {error && (
        <span className="small bad" role="alert">
          {error}
        </span>
      )}
    </form>
  );
}
