import { COUNTERS, HISTOGRAMS } from "@volley/contracts";
import { IntervalRecorder, summarizeRun } from "@volley/metrics";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { UsersTables } from "./users-tables";

function users(fill: (r: IntervalRecorder) => void) {
  const r = new IntervalRecorder();
  r.increment(COUNTERS.usersStarted, 5);
  r.increment(COUNTERS.usersCompleted, 5);
  fill(r);
  const health = { cpu: 10, eventLoopDelayMs: { p50: 1, max: 2 }, rssMb: 50, sendLagMaxMs: 0, saturated: false };
  return summarizeRun([{ index: 0, startedAt: 0, durationMs: 1000, warmup: false, ...r.take(), health }], []).users!;
}

describe("the users panel", () => {
  it("has a row per connection when users held several: opens, drops, reconnects and connect time", () => {
    const html = renderToStaticMarkup(
      createElement(UsersTables, {
        users: users((r) => {
          r.increment(`${COUNTERS.connectionsOpened}.main`, 5);
          r.increment(`${COUNTERS.connectionsOpened}.feed`, 20);
          r.increment(`${COUNTERS.connectionsDropped}.feed`, 15);
          r.increment(`${COUNTERS.reconnects}.feed`, 14);
          r.increment(`${COUNTERS.reconnectsFailed}.feed`, 1);
          r.recordMicros(`${HISTOGRAMS.connect}.feed`, 3_000);
        }),
      }),
    );
    expect(html).toContain('data-testid="users-connections"');
    expect(html).toMatch(/>feed<\/th><td class="num">20<\/td><td class="num bad">15<\/td>/);
    expect(html).toContain("14 (1 gave up)");
    expect(html).toMatch(/>main<\/th><td class="num">5<\/td><td class="num">0<\/td>/);
  });

  it("has no connections table for users holding one", () => {
    expect(renderToStaticMarkup(createElement(UsersTables, { users: users(() => {}) }))).not.toContain("users-connections");
  });
});
