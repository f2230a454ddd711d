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

/**
 * Downloads of the run: its summary as JSON and the timeline as CSV (what is on screen), JUnit XML
 * for CI, and a self-contained HTML report that opens offline; Print gives the page's print view.
 * A shared run of another org has no JUnit or report links: those API routes answer for the active org.
 */
export function RunExports({ run, intervals, shared = false }: { run: Run; intervals: IntervalPoint[]; shared?: boolean }) {
  return (
    <div className="exports" data-testid="run-exports">
      <span className="small subtle">Export</span>
      <button
        type="button"
        className="button small"
        disabled={!run.summary}
        onClick={() => download(`${run.id}-summary.json`, "application/json", `${JSON.stringify(run, null, 2)}\n`)}
      >
        Summary (JSON)
      </button>
      <button
        type="button"
        className="button small"
        disabled={intervals.length === 0}
        onClick={() => download(`${run.id}-intervals.csv`, "text/csv", intervalsCsv(intervals))}
      >
        Intervals (CSV)
      </button>
      {!shared && (
        <>
          <a className="button small" href={`/api/v1/runs/${run.id}/junit`} download>
            JUnit (XML)
          </a>
          <a className="button small" href={`/api/v1/runs/${run.id}/report.html`} download data-testid="report-download">
            Report (HTML)
          </a>
        </>
      )}
      <button type="button" className="button small" onClick={() => window.print()} title="The page as it prints: charts and tables, no navigation or buttons">
        Print
      </button>
    </div>
  );
}
