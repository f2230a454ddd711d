import { COUNTERS, HISTOGRAMS, type Run } from "@volley/contracts";
import { IntervalRecorder, summarizeRun } from "@volley/metrics";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ReconnectStormPanel, stormChart } from "./reconnect-storm-panel";

const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };

/** A users run's seconds: 4 users connect, the server drops all 4 in second 1, 3 are back after 0.6–1.6 s. */
function run(): Run {
  const seconds = [{ opened: 4 }, { dropped: 4, reconnects: [600] }, { reconnects: [1200, 1600] }, {}].map((s, index) => {
    const r = new IntervalRecorder();
    r.increment(COUNTERS.usersStarted, index === 0 ? 4 : 0);
    r.increment(COUNTERS.connectionsOpened, (s.opened ?? 0) + (s.reconnects?.length ?? 0));
    if (s.dropped) {
      r.increment(COUNTERS.connectionsDropped, s.dropped);
      r.increment(COUNTERS.connectionsClosed, s.dropped);
    }
    for (const ms of s.reconnects ?? []) {
      r.increment(COUNTERS.reconnects);
      r.recordMicros(HISTOGRAMS.reconnectTime, ms * 1000);
    }
    return { index, startedAt: 1_000_000 + index * 1000, durationMs: 1000, warmup: false, ...r.take(), health };
  });
  return { summary: summarizeRun(seconds, []) } as unknown as Run;
}

describe("the reconnect-storm panel", () => {
  it("lists each storm with its times back, and marks the drop and the recovery on the open-connections chart", () => {
    const r = run();
    const storm = r.summary!.reconnectStorms![0]!;
    expect(storm).toMatchObject({ index: 1, dropped: 4, connectedBefore: 4, connectedLowest: 1, reconnected: 3, connected: [1, 3, 3] });
    const html = renderToStaticMarkup(createElement(ReconnectStormPanel, { run: r }));
    expect(html).toContain('data-testid="reconnect-storms"');
    // 50 %: the 2nd of 4 back (1.2 s); 90 % and 99 % need all 4: never, shown as —.
    expect(html).toMatch(
      /<td class="num">1<\/td><td class="num">4<\/td><td class="num">4<\/td><td class="num">1<\/td><td class="num">3<\/td><td class="num">0<\/td><td class="num">1,?20\d(\.\d)? ms<\/td><td class="num">—<\/td><td class="num">—<\/td>/,
    );
    expect(html).toContain('data-testid="reconnect-storm-chart" data-second="1"');

    const c = stormChart(storm);
    expect(c.x).toEqual([-1, 0, 1, 2]);
    expect(c.series[0]!.values).toEqual([4, 1, 3, 3]);
    expect(c.markers).toEqual([{ x: 0, label: "drop: 4" }]);
    // Never all back: the dip is shaded to the chart's end, marked as such.
    expect(c.regions).toEqual([{ from: 0, to: 2, label: "not all back", failed: true }]);
  });

  it("draws the 90 % and 99 % recoveries where they fell", () => {
    const c = stormChart({
      index: 5,
      startedAt: 0,
      seconds: 1,
      dropped: 10,
      connectedBefore: 10,
      connectedLowest: 0,
      reconnected: 10,
      failed: 0,
      back: { p50: 400, p90: 1450, p99: 1900 },
      connected: [0, 8, 10],
    });
    expect(c.markers.map((m) => m.x)).toEqual([0, 1.5, 1.9]);
    expect(c.regions).toEqual([{ from: 0, to: 1.9, label: "recovery", failed: false }]);
  });

  it("is absent for a run without storms", () => {
    expect(renderToStaticMarkup(createElement(ReconnectStormPanel, { run: { summary: null } as unknown as Run }))).toBe("");
  });
});
