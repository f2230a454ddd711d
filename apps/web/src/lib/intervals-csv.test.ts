import { describe, expect, it } from "vitest";
import { intervalsCsv } from "./intervals-csv";

describe("intervalsCsv", () => {
  it("writes a header and one row per second, empty cells for unmeasured percentiles", () => {
    const csv = intervalsCsv([
      {
        index: 0,
        t: 0,
        warmup: true,
        saturated: false,
        connections: 5,
        sent: 10,
        received: 9,
        errors: 1,
        lost: 1,
        disconnects: 0,
        connectFailed: 0,
        health: { cpu: 12.5, eventLoopMs: 2, sendLagMs: 0.4, agents: 1 },
        p50: 1.5,
        p95: 2,
        p99: 3,
        max: 4,
      },
      {
        index: 1,
        t: 1000,
        warmup: false,
        saturated: true,
        connections: 5,
        sent: 0,
        received: 0,
        errors: 0,
        lost: 0,
        disconnects: 2,
        connectFailed: 0,
        health: { cpu: 99, eventLoopMs: 80, sendLagMs: 30, agents: 1 },
        p50: null,
        p95: null,
        p99: null,
        max: null,
      },
    ]);
    const lines = csv.trimEnd().split("\r\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^index,time_iso,warmup,saturated,connections,sent,received,lost,errors,disconnects/);
    expect(lines[1]).toBe("0,1970-01-01T00:00:00.000Z,true,false,5,10,9,1,1,0,0,1.5,2,3,4,12.5,2,0.4,1");
    expect(lines[2]).toBe("1,1970-01-01T00:00:01.000Z,false,true,5,0,0,0,0,2,0,,,,,99,80,30,1");
  });
});
