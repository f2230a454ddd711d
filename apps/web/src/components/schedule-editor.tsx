"use client";

import type { FieldIssue, PlanSchedule } from "@volley/contracts";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { apiFetch, ApiRequestError } from "../lib/api-client";
import { fmtDateTime } from "../lib/format";

/** A plan's cron schedule: shown with its last and next run, saved (PUT) or removed (DELETE); a bad field is named beside it. */
export function ScheduleEditor({ planId, initial, canEdit }: { planId: string; initial: PlanSchedule | null; canEdit: boolean }) {
  const [schedule, setSchedule] = useState(initial);
  const [cron, setCron] = useState(initial?.cron ?? "0 3 * * *");
  const [timezone, setTimezone] = useState(initial?.timezone ?? "UTC");
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const [issues, setIssues] = useState<FieldIssue[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const issueOf = (path: string) => issues.find((i) => i.path === path)?.message;

  async function save(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setIssues([]);
    try {
      setSchedule(await apiFetch<PlanSchedule>(`/api/v1/plans/${planId}/schedule`, { method: "PUT", body: JSON.stringify({ cron, timezone, enabled }) }));
    } catch (err) {
      if (err instanceof ApiRequestError && err.issues.length > 0) setIssues(err.issues);
      else setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    setBusy(true);
    setError(null);
    try {
      await apiFetch(`/api/v1/plans/${planId}/schedule`, { method: "DELETE" });
      setSchedule(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="panel schedule" aria-label="Schedule" data-testid="schedule-editor">
      <h2 className="panel-title">Schedule</h2>
      {schedule ? (
        <p className="small" data-testid="schedule-state">
          Runs <code className="mono">{schedule.cron}</code> ({schedule.timezone}){schedule.enabled ? "" : " — paused"}. Next run:{" "}
          <strong suppressHydrationWarning>{schedule.nextRunAt ? fmtDateTime(schedule.nextRunAt) : "—"}</strong>. Last run:{" "}
          {schedule.lastRunAt ? (
            <span suppressHydrationWarning>
              {fmtDateTime(schedule.lastRunAt)}
              {schedule.lastRunId ? (
                <>
                  {" "}
                  (<Link href={`/runs/${schedule.lastRunId}`}>{schedule.lastRunId}</Link>)
                </>
              ) : null}
            </span>
          ) : (
            "never"
          )}
          {schedule.lastError && <span className="bad"> — the last firing started no run: {schedule.lastError}</span>}
        </p>
      ) : (
        <p className="small muted">Not scheduled: the plan runs only when someone (or CI) starts it.</p>
      )}
      {canEdit && (
        <form className="inline-form" onSubmit={save}>
          <label>
            Cron <span className="subtle small">(minute hour day month weekday)</span>
            <input
              type="text"
              value={cron}
              onChange={(e) => setCron(e.target.value)}
              className="mono"
              aria-invalid={issueOf("cron") ? true : undefined}
              aria-label="Cron expression"
            />
            {issueOf("cron") && (
              <span className="bad small" role="alert">
                cron: {issueOf("cron")}
              </span>
            )}
          </label>
          <label>
            Time zone
            <input
              type="text"
              value={timezone}
              onChange={(e) => setTimezone(e.target.value)}
              aria-invalid={issueOf("timezone") ? true : undefined}
              aria-label="Time zone"
            />
            {issueOf("timezone") && (
              <span className="bad small" role="alert">
                timezone: {issueOf("timezone")}
              </span>
            )}
          </label>
          <label>
            <span>
              <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> enabled
            </span>
          </label>
          <button type="submit" className="button primary" disabled={busy}>
            {schedule ? "Save schedule" : "Schedule"}
          </button>
          {schedule && (
            <button type="button" className="button" onClick={remove} disabled={busy}>
              Remove schedule
            </button>
          )}
        </form>
      )}
      {error && (
        <p className="bad small" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
