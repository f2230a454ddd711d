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
  // The form's own fields, not state: a tag typed before hydration is in the DOM but was never seen
  // by onChange, and a select applied at once takes the search and tag typed beside it.
  const read = (form: HTMLFormElement): RunFilterValues => {
    const data = new FormData(form);
    const field = (k: keyof RunFilterValues) => String(data.get(k) ?? "");
    return { q: field("q"), planId: field("planId"), status: field("status"), tag: field("tag"), from: field("from"), to: field("to") };
  };
  const apply = (form: HTMLFormElement) => {
    const next = read(form);
    setF(next);
    onApply(next);
  };
  const change = (e: { currentTarget: { form: HTMLFormElement | null } }) => {
    if (e.currentTarget.form) apply(e.currentTarget.form);
  };
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    apply(e.currentTarget);
  };
  const any = Object.values(f).some(Boolean);
  return (
    <form className={compact ? "run-filters compact" : "run-filters"} onSubmit={submit} action={action} aria-label="Filter runs">
      {/* Text fields uncontrolled (read from the form on submit, reset by their key when the applied filters change): a
          controlled field hydrating after the user typed put its empty state back, and Filter then applied no tag. */}
      <input key={`q:${value.q}`} type="search" name="q" defaultValue={value.q} placeholder="Search name or id" aria-label="Search runs by name or id" />
      <select name="planId" value={f.planId} onChange={change} aria-label="Plan">
        <option value="">Any plan</option>
        {plans.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
      <select name="status" value={f.status} onChange={change} aria-label="Status">
        <option value="">Any status</option>
        {runStatusSchema.options.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
      <input key={`tag:${value.tag}`} type="text" name="tag" defaultValue={value.tag} placeholder="Tag" aria-label="Tag" size={10} />
      <label className="small muted">
        from <input type="date" name="from" value={f.from} onChange={change} aria-label="Created from" />
      </label>
      <label className="small muted">
        to <input type="date" name="to" value={f.to} onChange={change} aria-label="Created until" />
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
