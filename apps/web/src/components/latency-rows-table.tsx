import type { LatencySummary } from "@volley/contracts";
import type { ReactNode } from "react";
import { fmtInt, fmtMs } from "../lib/format";

export interface LatencyRow {
  name: string;
  /** What the row measures, shown on hover. */
  hint: string;
  s: LatencySummary;
}

/** A table of latency distributions, one row each, with the same columns everywhere on the run page. */
export function LatencyRowsTable({
  caption,
  testId,
  rows,
  className,
  mono,
  children,
}: {
  caption: string;
  testId: string;
  rows: LatencyRow[];
  className?: string;
  mono?: boolean;
  children?: ReactNode;
}) {
  return (
    <div className="panel flush">
      <table className={className ? `table ${className}` : "table"} data-testid={testId}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th>Kind</th>
            <th className="num">Samples</th>
            <th className="num">min</th>
            <th className="num">p50</th>
            <th className="num">p90</th>
            <th className="num">p95</th>
            <th className="num">p99</th>
            <th className="num">max</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ name, hint, s }) => (
            <tr key={name}>
              <th scope="row" title={hint} className={mono ? "mono" : undefined}>
                {name}
              </th>
              <td className="num">{fmtInt(s.count)}</td>
              <td className="num">{fmtMs(s.min)}</td>
              <td className="num">{fmtMs(s.p50)}</td>
              <td className="num">{fmtMs(s.p90)}</td>
              <td className="num">{fmtMs(s.p95)}</td>
              <td className="num">{fmtMs(s.p99)}</td>
              <td className="num">{fmtMs(s.max)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {children}
    </div>
  );
}
