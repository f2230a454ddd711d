"use client";

import type { MetricsExport } from "@volley/contracts";
import { useState, type FormEvent } from "react";
import { apiFetch, ApiRequestError } from "../lib/api-client";

const describe = (err: unknown) => (err instanceof ApiRequestError ? err.message : String(err));

/** `env=staging` lines to a label map, and back. */
const parseLabels = (text: string) =>
  Object.fromEntries(
    text
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => {
        const at = l.indexOf("=");
        return at < 0 ? [l, ""] : [l.slice(0, at).trim(), l.slice(at + 1).trim()];
      }),
  );
const formatLabels = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");

/** The org's Prometheus remote-write export: set, see the last push, remove. */
export function MetricsExportForm({ initial }: { initial: MetricsExport | null }) {
  const [current, setCurrent] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  async function save(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const authorization = String(form.get("authorization") ?? "");
    const body = {
      url: String(form.get("url") ?? ""),
      labels: parseLabels(String(form.get("labels") ?? "")),
      enabled: form.get("enabled") === "on",
      // Left empty: keep the stored header; "remove" clears it.
      ...(form.get("removeAuthorization") === "on" ? { authorization: null } : authorization ? { authorization } : {}),
    };
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      setCurrent((await apiFetch<{ metricsExport: MetricsExport }>("/api/v1/metrics-export", { method: "PUT", body: JSON.stringify(body) })).metricsExport);
      setSaved(true);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    if (!window.confirm("Stop pushing run metrics to this endpoint?")) return;
    setError(null);
    try {
      await apiFetch("/api/v1/metrics-export", { method: "DELETE" });
      setCurrent(null);
      setSaved(false);
    } catch (err) {
      setError(describe(err));
    }
  }

  return (
    <section className="panel">
      <h2 className="panel-title">Prometheus remote-write endpoint</h2>
      <form className="auth-form" onSubmit={save} key={current?.updatedAt ?? "new"} data-testid="metrics-export-form">
        <label>
          URL
          <input type="text" name="url" required maxLength={2000} placeholder="https://prometheus.example.com/api/v1/write" defaultValue={current?.url ?? ""} />
        </label>
        <label>
          Authorization header{" "}
          {current?.hasAuthorization ? (
            <span className="muted">(one is stored; leave empty to keep it)</span>
          ) : (
            <span className="muted">(optional: Bearer … or Basic …)</span>
          )}
          <input type="password" name="authorization" autoComplete="off" maxLength={4096} placeholder={current?.hasAuthorization ? "••••••••" : "Bearer …"} />
        </label>
        {current?.hasAuthorization && (
          <label>
            <span>
              <input type="checkbox" name="removeAuthorization" /> remove the stored Authorization header
            </span>
          </label>
        )}
        <label>
          Extra labels <span className="muted">(one name=value per line, added to every series)</span>
          <textarea name="labels" rows={3} defaultValue={current ? formatLabels(current.labels) : ""} placeholder="env=staging" />
        </label>
        <label>
          <span>
            <input type="checkbox" name="enabled" defaultChecked={current?.enabled ?? true} /> push run metrics
          </span>
        </label>
        <div>
          <button type="submit" className="button primary" disabled={busy}>
            Save
          </button>{" "}
          {current && (
            <button type="button" className="button" onClick={() => void remove()}>
              Remove
            </button>
          )}
        </div>
      </form>
      {error && (
        <p className="bad" role="alert">
          {error}
        </p>
      )}
      {saved && !error && (
        <p className="good" role="status">
          Saved. Runs that start from now on are pushed there, running ones within 30 s.
        </p>
      )}
      {current && (
        <p className="muted" data-testid="metrics-export-last-push">
          Last push:{" "}
          {current.lastPushAt ? (
            <>
              {new Date(current.lastPushAt).toLocaleString()} —{" "}
              {current.lastError ? <span className="bad">{current.lastError}</span> : <span className="good">answered {current.lastStatus}</span>}
            </>
          ) : (
            "none yet (pushes start with the next run)"
          )}
        </p>
      )}
    </section>
  );
}
