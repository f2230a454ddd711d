/**
 * The machine's own timing floor: how late can *any* Node process on this machine be, doing
 * nothing but waiting for its timers? The latency-truth goal (p99 within 1 ms of the truth) cannot be
 * met by a load generator on a machine whose floor is above it, so this is measured beside it.
 *
 * Two probes, each a bare Node process pinned to core 1 (where latency-truth runs the agent):
 * - timers: events due at 1,000/s for 10 s, scheduled exactly as the agent's send loop schedules
 *   (one setTimeout to the next due, rounded up to whole ms, everything due sent in one callback);
 *   the lateness of every event, the same quantity as the agent's send lag.
 * - spin: a synchronous loop reading performance.now() for 10 s, no timers and no I/O; every gap
 *   between two readings above 1 ms is time the process was taken off its core (host or guest
 *   scheduler). The guest kernel here does not report steal time (/proc/stat steal stays 0).
 * Each probe runs with core 0 idle and with core 0 kept busy by a spinning process (as during
 * latency-truth, whose precise-hold target keeps core 0 busy).
 *
 *   node --import tsx bench/machine-floor.ts [runs=3]
 */
import { median, spawnPinned } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));

// Mirrors ShardEngine.scheduleNext: ceil to whole ms, all due events handled in one callback.
const TIMER_PROBE = `
const N = 10000, lags = new Float64Array(N); const t0 = performance.now() + 100; let i = 0;
function tick() {
  const now = performance.now();
  while (i < N && t0 + i <= now) { lags[i] = now - (t0 + i); i++; }
  if (i >= N) { const s = Array.from(lags).sort((a, b) => a - b); const q = (p) => s[Math.floor(p * (N - 1))];
    return console.log(JSON.stringify({ p50: q(0.5), p90: q(0.9), p99: q(0.99), p999: q(0.999), max: s[N - 1] })); }
  setTimeout(tick, Math.max(0, Math.ceil(t0 + i - performance.now())));
}
setTimeout(tick, 100);`;

const SPIN_PROBE = `
const start = performance.now(); let last = start, over1 = 0, over2 = 0, over5 = 0, lost = 0, max = 0;
for (;;) { const t = performance.now(); const g = t - last; last = t;
  if (g > 1) { over1++; lost += g; } if (g > 2) over2++; if (g > 5) over5++; if (g > max) max = g;
  if (t - start > 10000) break; }
console.log(JSON.stringify({ over1, over2, over5, lostMs: lost, max }));`;

const BUSY = "for (;;) {}";

async function probe(source: string, core0Busy: boolean): Promise<Record<string, number>> {
  const busy = core0Busy ? spawnPinned(0, [process.execPath, "-e", BUSY], { limitMs: 60_000 }) : undefined;
  try {
    const p = spawnPinned(1, [process.execPath, "-e", source], { limitMs: 60_000 });
    const code = await p.exited;
    if (code !== 0) throw new Error(`probe exited ${code}: ${p.stderr().slice(-300)}`);
    return JSON.parse(p.stdout()) as Record<string, number>;
  } finally {
    busy?.child.kill("SIGKILL");
    await busy?.exited;
  }
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const result: Record<string, Record<string, number>> = {};
for (const [name, source] of [
  ["timers", TIMER_PROBE],
  ["spin", SPIN_PROBE],
] as const) {
  for (const core0Busy of [false, true]) {
    const runs: Record<string, number>[] = [];
    for (let r = 0; r < RUNS; r++) {
      const out = await probe(source, core0Busy);
      runs.push(out);
      console.error(
        `${name}, core 0 ${core0Busy ? "busy" : "idle"}, run ${r + 1}: ${Object.entries(out)
          .map(([k, v]) => `${k} ${r3(v)}`)
          .join(", ")}`,
      );
    }
    const keys = Object.keys(runs[0]!);
    result[`${name}, core 0 ${core0Busy ? "busy" : "idle"}`] = Object.fromEntries(keys.map((k) => [k, r3(median(runs.map((o) => o[k]!)))]));
  }
}
console.log(JSON.stringify({ runs: RUNS, units: "ms (timers: lateness of 10,000 events; spin: gaps in 10 s)", ...result }, null, 2));
