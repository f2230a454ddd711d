"use client";

import type { IntervalPoint, Run } from "@volley/contracts";
import { intervalsCsv } from "../lib/intervals-csv";

function download(name: string, type: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Downloads of what is on screen: the run with its summary as JSON, the timeline as CSV. */
export function RunExports({ run, intervals }: { run: Run; intervals: IntervalPoint[] }) {
  return (
    <div className="exports" data-testid="run-exports">
      <span className="small subtle">Export</span>
      <button type="button" className="button small" disabled={!run.summary} onClick={() => download(`${run.id}-summary.json`, "application/json", JSON.stringify(run, null, 2) + "\n")}>
        Summary (JSON)
      </button>
      <button type="button" className="button small" disabled={intervals.length === 0} onClick={() => download(`${run.id}-intervals.csv`, "text/csv", intervalsCsv(intervals))}>
        Intervals (CSV)
      </button>
    </div>
  );
}
