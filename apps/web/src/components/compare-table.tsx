"use client";

import type { RunSummary } from "@volley/contracts";
import { COMPARE_METRICS, deltaOf, fmtDelta, fmtRel } from "../lib/run-deltas";

export interface CompareColumn {
  id: string;
  label: string;
  summary: RunSummary | null;
  baseline: boolean;
}

/**
 * Runs side by side, each metric with its absolute and relative change against the reference
 * column: green where it moved the better way (lower latency, higher throughput), red the worse,
 * plain within the noise tolerance.
 */
export function CompareTable({ columns, referenceId, onReference }: { columns: CompareColumn[]; referenceId: string; onReference: (id: string) => void }) {
  const ref = columns.find((c) => c.id === referenceId) ?? columns[0]!;
  return (
    <div className="table-scroll">
      <table className="table compare-table" data-testid="compare-table">
        <thead>
          <tr>
            <th>Metric</th>
            {columns.map((c) => (
              <th key={c.id} className="num">
                <div className="compare-col-head">
                  <a href={`/runs/${c.id}`}>{c.label}</a>
                  {c.baseline && <span className="badge baseline-badge">baseline</span>}
                  <label className="small subtle">
                    <input type="radio" name="reference" checked={c.id === ref.id} onChange={() => onReference(c.id)} data-reference={c.id} /> compare against
                  </label>
                </div>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {COMPARE_METRICS.map((m) => {
            const values = columns.map((c) => (c.summary ? m.value(c.summary) : null));
            if (values.every((v) => v === null)) return null;
            return (
              <tr key={m.key} data-metric={m.key}>
                <th scope="row">
                  {m.label} <span className="subtle small">{m.better === "lower" ? "↓ better" : "↑ better"}</span>
                </th>
                {columns.map((c) => {
                  // Every change past the noise floor is coloured here; the trend flags only those past the tolerance.
                  const d = deltaOf(m, ref.summary, c.summary, 0);
                  const cls = d.verdict === "better" ? "good" : d.verdict === "worse" ? "bad" : "";
                  return (
                    <td key={c.id} className="num" data-verdict={c.id === ref.id ? "reference" : d.verdict}>
                      <div>{m.format(d.value)}</div>
                      {c.id !== ref.id && d.abs !== null && (
                        <div className={`small delta ${cls}`}>
                          {fmtDelta(m, d.abs)} ({fmtRel(d.rel)})
                        </div>
                      )}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
