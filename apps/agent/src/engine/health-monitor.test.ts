import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Health } from "@volley/contracts";
import { describe, expect, it, vi } from "vitest";
import { HealthMonitor, saturationCauses } from "./health-monitor";

const SAMPLE_CHILD = fileURLToPath(new URL("./health-sample-child.ts", import.meta.url));
const canPin = existsSync("/proc/thread-self/schedstat") && spawnSync("taskset", ["-c", "0", "true"]).status === 0;

describe("health monitor", () => {
  it("reports CPU, memory and send lag, and flags a busy loop", async () => {
    const m = new HealthMonitor();
    await new Promise((r) => setTimeout(r, 50));
    const idle = m.sample({ maxMs: 3, sends: 100, late: 0 });
    expect(idle.saturated).toBe(false);
    expect(idle.rssMb).toBeGreaterThan(10);
    expect(idle.sendLagMaxMs).toBe(3);

    // Long enough that the blocked event loop alone marks saturation, whatever a VM's CPU accounting says.
    const until = performance.now() + 400;
    while (performance.now() < until); // one core, flat out
    const busy = m.sample();
    // CPU share depends on what the hypervisor gives us; the blocked loop does not.
    expect(busy.cpu).toBeGreaterThan(0);
    expect(busy.eventLoopDelayMs.max).toBeGreaterThan(300);
    expect(busy.saturated).toBe(true);

    expect(m.sample({ maxMs: 40, sends: 100, late: 50 }).saturated).toBe(true);
    m.stop();
  });

  it("keeps sampling when every file descriptor is taken (rss() throws EMFILE)", () => {
    const m = new HealthMonitor();
    const first = m.sample().rssMb;
    const emfile = Object.assign(new Error("EMFILE: too many open files, uv_resident_set_memory"), { code: "EMFILE" });
    const rss = vi.spyOn(process.memoryUsage, "rss").mockImplementation(() => {
      throw emfile;
    });
    try {
      expect(m.sample().rssMb).toBe(first);
      expect(rss).toHaveBeenCalled();
    } finally {
      rss.mockRestore();
      m.stop();
    }
  });

  it("reads the event loop's busy share, which judges a closed loop's interval: held in short slices, its CPU and delay read low", async () => {
    const m = new HealthMonitor();
    await new Promise((r) => setTimeout(r, 200));
    const idle = m.sample({ maxMs: 0, sends: 50, late: 0, closedLoop: true });
    expect(idle.loopBusy).toBeLessThan(50);
    expect(idle.saturated).toBe(false);

    // The thread stopped 2 ms at a time (Atomics.wait: no CPU), timers and I/O turning between: a
    // loop that never waits for anything, as when replies queue for an agent whose core is taken.
    const cell = new Int32Array(new SharedArrayBuffer(4));
    const held = async () => {
      const until = performance.now() + 300;
      while (performance.now() < until) {
        Atomics.wait(cell, 0, 0, 2);
        await new Promise((r) => setImmediate(r));
      }
    };
    await held();
    const closed = m.sample({ maxMs: 1, sends: 100, late: 0, closedLoop: true });
    expect(closed.loopBusy).toBeGreaterThan(90);
    expect(closed.eventLoopDelayMs.p50).toBeLessThan(20);
    expect(closed.saturated).toBe(true);
    expect(saturationCauses(closed, { sends: 100, late: 0, closedLoop: true }).join()).toMatch(/^event loop busy \d+(\.\d)?% > 90% in a closed loop/);
    // An open loop is judged by its schedule instead: sends on time, the same busy loop is not its limit.
    await held();
    const open = m.sample({ maxMs: 1, sends: 100, late: 0 });
    expect(open.loopBusy).toBeGreaterThan(90);
    expect(saturationCauses(open, { sends: 100, late: 0 }).filter((c) => c.startsWith("event loop busy"))).toEqual([]);
    m.stop();
  });

  it.skipIf(!canPin)(
    "reads how long the thread waited for a CPU: pinned to a core two spinners share, it waits most of the time it wants to run",
    async () => {
      const sample = (): Health =>
        JSON.parse(execFileSync("taskset", ["-c", "0", process.execPath, "--import", "tsx", SAMPLE_CHILD, "400"], { encoding: "utf8" }));
      // Two busy processes on the same core, each bounded in time.
      const spinners = [0, 1].map(() =>
        spawn("taskset", ["-c", "0", process.execPath, "-e", "const u = Date.now() + 6000; while (Date.now() < u);"], { stdio: "ignore" }),
      );
      try {
        await new Promise((r) => setTimeout(r, 200));
        const starved = sample();
        // A third of the core at most: it waited for the rest, and wanted the core throughout.
        expect(starved.cpuWait).toBeGreaterThan(30);
        expect(starved.cpu + starved.cpuWait!).toBeGreaterThan(80);
        expect(starved.saturated).toBe(true);
      } finally {
        for (const s of spinners) s.kill();
      }
    },
    30_000,
  );

  it("says which limits an interval broke, in words", () => {
    const calm = { cpu: 40, eventLoopDelayMs: { p50: 1, max: 30 } };
    expect(saturationCauses(calm, { sends: 100, late: 5 })).toEqual([]);
    expect(saturationCauses({ cpu: 97.44, eventLoopDelayMs: { p50: 25, max: 412 } }, { sends: 100, late: 14, shed: 3 })).toEqual([
      "CPU 97.4% > 90%",
      "event-loop delay p50 25 ms > 20 ms",
      "event-loop delay max 412 ms > 250 ms",
      "14% of sends > 10 ms late (14 of 100)",
      "3 slots shed unsent",
    ]);
    expect(saturationCauses({ ...calm, loopBusy: 96.44 }, { sends: 100, late: 0, closedLoop: true })).toEqual([
      "event loop busy 96.4% > 90% in a closed loop (replies waited for the agent)",
    ]);
    expect(saturationCauses({ ...calm, loopBusy: 85 }, { sends: 100, late: 0, closedLoop: true })).toEqual([]);
    // A closed loop's thread on a CPU or waiting for one: replies waited for the agent's core, its loop idle meanwhile.
    const starved = { cpu: 30.04, eventLoopDelayMs: { p50: 1, max: 30 }, loopBusy: 50, cpuWait: 64.96 };
    expect(saturationCauses(starved, { sends: 100, late: 0, closedLoop: true })).toEqual([
      "CPU 30% + waiting for a CPU 65% > 90% in a closed loop (replies waited for the agent's core)",
    ]);
    expect(saturationCauses(starved, { sends: 100, late: 0 })).toEqual([]);
    expect(saturationCauses({ ...starved, cpuWait: 50 }, { sends: 100, late: 0, closedLoop: true })).toEqual([]);
    // Over 90 % on its own, CPU is the cause, said once.
    expect(saturationCauses({ ...starved, cpu: 95, cpuWait: 4 }, { sends: 100, late: 0, closedLoop: true })).toEqual(["CPU 95% > 90%"]);
  });

  it("does not judge a slow interval on a handful of late sends", () => {
    const calm = { cpu: 5, eventLoopDelayMs: { p50: 0.2, max: 30 } };
    // A 1 msg/s sweep step whose one send a VM pause delayed: not the agent's limit.
    expect(saturationCauses(calm, { sends: 1, late: 1 })).toEqual([]);
    expect(saturationCauses(calm, { sends: 8, late: 4 })).toEqual([]);
    // Sustained: five or more late and over 10 % of the interval's sends.
    expect(saturationCauses(calm, { sends: 20, late: 5 })).toEqual(["25% of sends > 10 ms late (5 of 20)"]);
    expect(saturationCauses(calm, { sends: 1000, late: 100 })).toEqual([]);
  });
});
