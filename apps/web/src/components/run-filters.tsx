"use client";

import { runStatusSchema } from "@volley/contracts";
import { useEffect, useState, type FormEvent } from "react";
import { NO_FILTERS, type RunFilterValues } from "../lib/run-filter-values";

/** Search, plan, status, tag and date filters for a run list; `onApply` gets them when the form is submitted (or a select changes). */
export function RunFilters({
  value,
  plans,
  onApply,
  compact = false,
  action,
}: {
  value: RunFilterValues;
  plans: { id: string; name: string }[];
  onApply: (f: RunFilterValues) => void;
  compact?: boolean;
  /** Where the form goes when submitted before React hydrates (a plain GET with the same parameter names). */
  action?: string;
}) {
  const [f, setF] = useState(value);
  useEffect(() => setF(value), [value]);
  const set =
    (k: keyof RunFilterValues, apply = false) =>
    (e: { target: { value: string } }) => {
      const next = { ...f, [k]: e.target.value };
      setF(next);
      if (apply) onApply(next);
    };
  // The form's own fields, not state: a tag typed before hydration is in the DOM but was never seen by onChange.
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const read = (k: keyof RunFilterValues) => String(data.get(k) ?? "");
    onApply({ q: read("q"), planId: read("planId"), status: read("status"), tag: read("tag"), from: read("from"), to: read("to") });
  };
  const any = Object.values(f).some(Boolean);
  return (
    <form className={compact ? "run-filters compact" : "run-filters"} onSubmit={submit} action={action} aria-label="Filter runs">
      {/* Text fields uncontrolled (read from the form on submit, reset by their key when the applied filters change): a
          controlled field hydrating after the user typed put its empty state back, and Filter then applied no tag. */}
      <input key={`q:${value.q}`} type="search" name="q" defaultValue={value.q} placeholder="Search name or id" aria-label="Search runs by name or id" />
      <select name="planId" value={f.planId} onChange={set("planId", true)} aria-label="Plan">
        <option value="">Any plan</option>
        {plans.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
      <select name="status" value={f.status} onChange={set("status", true)} aria-label="Status">
        <option value="">Any status</option>
        {runStatusSchema.options.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
      <input key={`tag:${value.tag}`} type="text" name="tag" defaultValue={value.tag} placeholder="Tag" aria-label="Tag" size={10} />
      <label className="small muted">
        from <input type="date" name="from" value={f.from} onChange={set("from", true)} aria-label="Created from" />
      </label>
      <label className="small muted">
        to <input type="date" name="to" value={f.to} onChange={set("to", true)} aria-label="Created until" />
      </label>
      <button type="submit" className="button">
        Filter
      </button>
      {any && (
        <button
          type="button"
          className="button ghost"
          onClick={() => {
            setF(NO_FILTERS);
            onApply(NO_FILTERS);
          }}
        >
          Clear
        </button>
      )}
    </form>
  );
}
