"use client";

import { planRate, rateControlRefusal, type IntervalPoint, type RateChange, type Run } from "@volley/contracts";
import { useState } from "react";
import { ApiRequestError, apiFetch } from "../lib/api-client";
import { describeRateChange } from "../lib/rate-markers";
import { runProgress } from "../lib/run-progress";

/**
 * A running run's progress (time sent of the planned, time left) and, where its plan allows, its
 * live rate control: set a new rate in the plan's unit (users: arrivals per second) or go back to
 * the plan's. Every agent applies a change a second after it is asked for; the timelines mark it.
 */
export function RunLiveControl({ run, intervals, now, onChanged }: { run: Run; intervals: IntervalPoint[]; now: number; onChanged: () => Promise<unknown> }) {
  const progress = runProgress(run, intervals, now);
  const refusal = rateControlRefusal(run.plan);
  const { rate: planned, unit } = planRate(run.plan);
  const changes = run.rateChanges ?? [];
  const current = changes.at(-1)?.rate ?? planned;
  const [value, setValue] = useState(String(current));
  const [state, setState] = useState<{ kind: "idle" | "sending" } | { kind: "error"; message: string }>({ kind: "idle" });
  if (!progress && changes.length === 0) return null;

  const send = async (body: { rate: number } | { scale: number }) => {
    const next = "rate" in body ? body.rate : planned * body.scale;
    // A jump to several times the current load hits the server at once: say so and ask.
    if (next > 2 * current && !window.confirm(`Raise the rate from ${current} to ${next} ${unit}? Every agent sends at the new rate a second from now.`))
      return;
    setState({ kind: "sending" });
    try {
      await apiFetch<{ change: RateChange }>(`/api/v1/runs/${run.id}/rate`, { method: "POST", body: JSON.stringify(body) });
      setState({ kind: "idle" });
      await onChanged().catch(() => {});
    } catch (err) {
      setState({ kind: "error", message: err instanceof ApiRequestError || err instanceof Error ? err.message : String(err) });
    }
  };
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const rate = Number(value);
    if (!Number.isFinite(rate) || rate <= 0) return setState({ kind: "error", message: `rate: give a number above 0 (${unit})` });
    void send({ rate });
  };

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
      <section className="panel live-control" data-testid="live-control" aria-label="Rate changes">
        <h2 className="panel-title">Rate changed while it ran</h2>
        {list}
      </section>
    );

  return (
    <section className="panel live-control" data-testid="live-control" aria-label="Progress and live control">
      <div className="live-progress">
        <progress max={1} value={progress.fraction} aria-label="Planned sending time done" />
        <span className="small" data-testid="run-progress">
          {progress.text} <span className="subtle">({progress.tail})</span>
        </span>
      </div>
      {refusal ? (
        <p className="small subtle">Live rate control is not available for this plan: {refusal}.</p>
      ) : (
        <form className="rate-control" onSubmit={submit}>
          <label className="small">
            Rate now <strong data-testid="current-rate">{current.toLocaleString("en-US")}</strong> {unit}; set to{" "}
            <input
              type="number"
              name="rate"
              min="0"
              step="any"
              value={value}
              onChange={(e) => setValue(e.target.value)}
              aria-label={`New rate (${unit})`}
              className="rate-input"
            />{" "}
            {unit}
          </label>
          <button type="submit" className="button" disabled={state.kind === "sending"}>
            {state.kind === "sending" ? "Setting…" : "Set rate"}
          </button>
          {current !== planned && (
            <button type="button" className="button" disabled={state.kind === "sending"} onClick={() => void send({ scale: 1 })}>
              Back to the plan's {planned.toLocaleString("en-US")}
            </button>
          )}
        </form>
      )}
      {state.kind === "error" && (
        <p className="small bad" role="alert">
          Could not change the rate: {state.message}
        </p>
      )}
      {list}
    </section>
  );
}
