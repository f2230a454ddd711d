"use client";

import type { ReconnectStorm, Run } from "@volley/contracts";
import { fmtInt, fmtMs } from "../lib/format";
import { TimelineChart, type ChartMarker, type ChartRegion, type ChartSeries } from "./timeline-chart";

/** Charts drawn: the first storms (the table lists every one). */
const CHARTED = 3;
const STORM_AXIS = { label: "since the drop", format: (v: number) => `${v >= 0 ? "+" : ""}${v} s`, none: "hover a second" };

/**
 * The reconnect-storm view: each burst of server drops in a run whose connections reconnect, with
 * how long until 50, 90 and 99 % of the dropped were back (each timed from its own drop), and a
 * chart of the open connections by second around it, the drop and the recovery marked.
 */
export function ReconnectStormPanel({ run }: { run: Run }) {
  const storms = run.summary?.reconnectStorms ?? [];
  if (storms.length === 0) return null;
  return (
    <section className="panel chart-panel" data-testid="reconnect-storms">
      <h2 className="panel-title">Reconnect storms</h2>
      <p className="small subtle">
        Bursts of connections the server closed, and how long until that share of them was back (each timed from its own drop, the agents&apos; reconnect.time
        merged); — where fewer came back before the next storm or the run&apos;s end.
      </p>
      <div className="table-scroll">
        <table className="table" aria-label="Reconnect storms">
          <thead>
            <tr>
              <th className="num">Second</th>
              <th className="num">Dropped</th>
              <th className="num">Open before</th>
              <th className="num">Fewest open</th>
              <th className="num">Back</th>
              <th className="num">Gave up</th>
              <th className="num">50 % back</th>
              <th className="num">90 % back</th>
              <th className="num">99 % back</th>
            </tr>
          </thead>
          <tbody>
            {storms.map((s) => (
              <tr key={s.index} className={s.failed > 0 || s.back.p99 === null ? "step-limited" : undefined}>
                <td className="num">{s.index}</td>
                <td className="num">{fmtInt(s.dropped)}</td>
                <td className="num">{s.connectedBefore === null ? "—" : fmtInt(s.connectedBefore)}</td>
                <td className="num">{fmtInt(s.connectedLowest)}</td>
                <td className="num">{fmtInt(s.reconnected)}</td>
                <td className={`num${s.failed > 0 ? " bad" : ""}`}>{fmtInt(s.failed)}</td>
                <td className="num">{fmtMs(s.back.p50)}</td>
                <td className="num">{fmtMs(s.back.p90)}</td>
                <td className="num">{fmtMs(s.back.p99)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {storms.slice(0, CHARTED).map((s) => {
        const c = stormChart(s);
        return (
          <div key={s.index} data-testid="reconnect-storm-chart" data-second={s.index}>
            <h3 className="small">
              Open connections around second {s.index}: {fmtInt(s.dropped)} dropped
            </h3>
            <TimelineChart
              x={c.x}
              series={c.series}
              yLabel="open connections"
              warmup={c.none}
              saturated={c.none}
              markers={c.markers}
              regions={c.regions}
              height={170}
              xAxis={STORM_AXIS}
            />
          </div>
        );
      })}
    </section>
  );
}

/**
 * One storm's chart: open connections at the end of each second from the one before the drop (x = −1)
 * on; the drop marked at 0, the 90 % and 99 % recoveries where they fell, and the dip (drop to 99 %
 * back, or to the chart's end when never) shaded.
 */
export function stormChart(s: ReconnectStorm): {
  x: number[];
  none: boolean[];
  series: ChartSeries[];
  markers: ChartMarker[];
  regions: ChartRegion[];
} {
  const values = [...(s.connectedBefore === null ? [] : [s.connectedBefore]), ...s.connected];
  const first = s.connectedBefore === null ? 0 : -1;
  const x = values.map((_, i) => first + i);
  const seconds = (ms: number) => Math.round(ms / 100) / 10;
  const markers: ChartMarker[] = [{ x: 0, label: `drop: ${fmtInt(s.dropped)}` }];
  if (s.back.p90 !== null) markers.push({ x: seconds(s.back.p90), label: `90 % back ${fmtMs(s.back.p90)}` });
  if (s.back.p99 !== null) markers.push({ x: seconds(s.back.p99), label: `99 % back ${fmtMs(s.back.p99)}` });
  const end = s.back.p99 !== null ? seconds(s.back.p99) : (x.at(-1) ?? 0);
  const regions: ChartRegion[] = [{ from: 0, to: Math.max(end, 0.1), label: s.back.p99 !== null ? "recovery" : "not all back", failed: s.back.p99 === null }];
  return {
    x,
    none: x.map(() => false),
    series: [
      { label: "open connections", values, color: "#2563eb", format: (v) => (v === null ? "—" : fmtInt(v)), runValue: `${fmtInt(s.connectedLowest)} fewest` },
    ],
    markers,
    regions,
  };
}
