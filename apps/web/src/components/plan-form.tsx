"use client";

import { protocolSchema, type Plan } from "@volley/contracts";
import { setPlanField } from "../lib/set-plan-field";

interface Field {
  path: (string | number)[];
  label: string;
  kind: "text" | "number" | "protocol";
  read: (p: Plan) => string | number;
}

const FIELDS: Field[] = [
  { path: ["name"], label: "Name", kind: "text", read: (p) => p.name },
  { path: ["target", "url"], label: "Target URL", kind: "text", read: (p) => p.target.url },
  { path: ["target", "protocol"], label: "Protocol", kind: "protocol", read: (p) => p.target.protocol },
  { path: ["connections", "count"], label: "Connections", kind: "number", read: (p) => p.connections.count },
  { path: ["connections", "rate"], label: "Opened per second", kind: "number", read: (p) => p.connections.rate },
  { path: ["scenario", "message", "rate"], label: "Messages/s", kind: "number", read: (p) => p.scenario.message.rate },
  { path: ["scenario", "duration"], label: "Duration", kind: "text", read: (p) => p.scenario.duration },
];

/** A users plan has arrivals, not connections opened or a message rate. */
const USER_FIELDS: Field[] = [
  ...FIELDS.slice(0, 3),
  { path: ["connections", "count"], label: "Most users at once", kind: "number", read: (p) => p.connections.count },
  { path: ["scenario", "arrivalRate"], label: "Users arriving/s", kind: "number", read: (p) => (p.scenario.kind === "users" ? p.scenario.arrivalRate : "") },
  { path: ["scenario", "duration"], label: "Arrivals for", kind: "text", read: (p) => p.scenario.duration },
];

/**
 * The common fields of a plan as a form. Edits go into the YAML text itself, only the field's own
 * characters (set-plan-field.ts), so comments, order and every other field stay as the user wrote them.
 */
export function PlanForm({ text, plan, onChange }: { text: string; plan: Plan | null; onChange: (text: string) => void }) {
  const set = (path: (string | number)[], raw: string, kind: Field["kind"]) => {
    const value = kind === "number" && raw.trim() !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw;
    const next = setPlanField(text, path, value);
    if (next !== null) onChange(next); // null: the YAML must parse before the form can write into it
  };
  return (
    <fieldset className="panel plan-form" disabled={!plan}>
      <legend className="panel-title">Common fields</legend>
      {!plan && <p className="small subtle">Fix the plan's problems to edit it here.</p>}
      <div className="plan-form-grid">
        {(plan?.scenario.kind === "users" ? USER_FIELDS : FIELDS).map((f) => {
          const id = `plan-${f.path.join("-")}`;
          const current = plan ? String(f.read(plan)) : "";
          return (
            <label key={id} htmlFor={id} className="small">
              {f.label}
              {f.kind === "protocol" ? (
                <select id={id} value={current} onChange={(e) => set(f.path, e.target.value, f.kind)}>
                  {protocolSchema.options.map((p) => (
                    <option key={p} value={p}>
                      {p}
                    </option>
                  ))}
                </select>
              ) : (
                // Keyed by the value so a YAML edit refreshes the field; typing commits on blur or Enter.
                <input
                  key={current}
                  id={id}
                  defaultValue={current}
                  inputMode={f.kind === "number" ? "decimal" : undefined}
                  onBlur={(e) => e.target.value !== current && set(f.path, e.target.value, f.kind)}
                  onKeyDown={(e) => e.key === "Enter" && (e.currentTarget as HTMLInputElement).blur()}
                />
              )}
            </label>
          );
        })}
      </div>
    </fieldset>
  );
}
