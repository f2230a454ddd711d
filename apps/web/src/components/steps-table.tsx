import type { FlowSummary } from "@volley/contracts";
import { fmtInt, fmtMs } from "../lib/format";

/** A table of named steps (a flow's setup, a user's steps): how many completed and failed, and their times. */
export function StepsTable({
  caption,
  testId,
  steps,
  empty,
  hint,
  errorPrefix,
}: {
  caption: string;
  testId: string;
  steps: FlowSummary["setup"];
  empty: string;
  /** What a step's time measures, shown on hover. */
  hint: string;
  /** The error class prefix its failures are counted under (setup., step.). */
  errorPrefix: string;
}) {
  return (
    <div className="panel flush">
      <table className="table" data-testid={testId}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th>Step</th>
            <th className="num">Completed</th>
            <th className="num">Failed</th>
            <th className="num">p50</th>
            <th className="num">p95</th>
            <th className="num">p99</th>
            <th className="num">max</th>
          </tr>
        </thead>
        <tbody>
          {steps.length === 0 ? (
            <tr>
              <td className="muted" colSpan={7}>
                {empty}
              </td>
            </tr>
          ) : (
            steps.map((s) => (
              <tr key={s.step}>
                <th scope="row" className="mono" title={hint}>
                  {s.step}
                </th>
                <td className="num">{fmtInt(s.count)}</td>
                <td className={`num${s.failed > 0 ? " bad" : ""}`} title={s.failed > 0 ? `In errors as ${errorPrefix}${s.step}` : undefined}>
                  {fmtInt(s.failed)}
                </td>
                <td className="num">{fmtMs(s.latency.p50)}</td>
                <td className="num">{fmtMs(s.latency.p95)}</td>
                <td className="num">{fmtMs(s.latency.p99)}</td>
                <td className="num">{fmtMs(s.latency.max)}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
