/**
 * Memory per idle WebSocket connection: 5,000 connections opened at 1,000/s and held, each sending
 * one 64-byte message every 6 s. RSS delta per connection for `volley-agent run` vs the minimal
 * `ws` client (bench/baseline/ws-idle-client.ts), both on core 1, the echo target on core 0.
 * RSS "before" is taken once the process has loaded its code and before the first connection;
 * "held" 18 s later (5 s ramp + 13 s hold). Median of RUNS runs each.
 *
 *   node --import tsx bench/idle-memory.ts [runs=3]
 *
 * Agent RSS is read by this script from /proc/<pid>/status (VmRSS) when the agent's stderr shows
 * the run starting and when its progress line reaches 18 s; the baseline reports
 * process.memoryUsage.rss(), the same number, at the same two moments.
 */
import { readFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AGENT_BIN, median, spawnPinned, startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const CONNS = 5000,
  CONNECT_RATE = 1000,
  EVERY_S = 6,
  HOLD_S = 13;
const RAMP_S = CONNS / CONNECT_RATE;

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

const target = await startTarget();
const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-"));
const planFile = path.join(dir, "idle-memory.yaml");
writeFileSync(
  planFile,
  `name: idle memory
target: { url: "${target.url}", connectTimeout: 20s }
connections: { count: ${CONNS}, rate: ${CONNECT_RATE} }
scenario: { kind: echo, message: { rate: ${1 / EVERY_S}, bytes: 64 }, duration: ${HOLD_S + 2}s }
`,
);

const rows: { who: string; opened: number; perConn: number }[] = [];
try {
  for (let run = 1; run <= RUNS; run++) {
    const b = spawnPinned(1, [
      process.execPath,
      "--import",
      "tsx",
      "bench/baseline/ws-idle-client.ts",
      target.url,
      String(CONNS),
      String(CONNECT_RATE),
      String(HOLD_S),
      String(EVERY_S),
    ]);
    await b.exited;
    const r = JSON.parse(b.stdout().trim().split("\n").pop()!) as { opened: number; rssBefore: number; rssHeld: number };
    rows.push({ who: "baseline", opened: r.opened, perConn: (r.rssHeld - r.rssBefore) / r.opened });

    const a = spawnPinned(1, [process.execPath, AGENT_BIN, "run", planFile], { limitMs: 90_000 });
    const pid = a.child.pid!;
    await a.waitFor(/^running /);
    const before = rssOf(pid);
    const line = await a.waitFor(new RegExp(`^\\s*${Math.round(RAMP_S + HOLD_S)}s\\s+conns`), 60_000);
    const held = rssOf(pid);
    const opened = Number(/conns (\d+)/.exec(line)![1]);
    await a.exited;
    rows.push({ who: "volley-agent", opened, perConn: (held - before) / opened });
    console.error(
      rows
        .slice(-2)
        .map((x) => `run ${run} ${x.who}: ${x.opened} open, ${(x.perConn / 1024).toFixed(1)} KB/connection`)
        .join("\n"),
    );
  }
} finally {
  await target.stop();
}

const med = (who: string) => median(rows.filter((r) => r.who === who).map((r) => r.perConn));
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      baselineKbPerConn: med("baseline") / 1024,
      agentKbPerConn: med("volley-agent") / 1024,
      ratio: med("volley-agent") / med("baseline"),
      perRun: rows.map((r) => ({ ...r, kbPerConn: r.perConn / 1024 })),
    },
    null,
    2,
  ),
);
