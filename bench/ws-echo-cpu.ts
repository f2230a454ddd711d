/**
 * CPU-seconds per 100,000 round trips, raw WebSocket echo, 100 connections, 20,000 msg/s for 5 s:
 * the minimal `ws` client (bench/baseline/ws-echo-client.ts) vs `volley-agent run` with the same
 * load. Target on core 0, client on core 1, median of RUNS runs each, alternating.
 *
 *   node --import tsx bench/ws-echo-cpu.ts [runs=3]
 *
 * CPU window: both report process.cpuUsage() over the run itself (connect + send + last replies),
 * excluding Node/tsx start-up; the agent prints it on its closing stderr line. Whole-process CPU
 * (start-up included, from /usr/bin/time) is reported too.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AGENT_BIN, agentCpuSeconds, median, spawnPinned, startTarget } from "./lib/spawn-pinned";

const RUNS = Math.max(1, Math.min(9, Number(process.argv[2] ?? 3)));
const CONNS = 100, RATE = 20_000, SECONDS = 5;

function timeLine(stderr: string): number {
  const m = /TIME ([\d.]+) ([\d.]+)/.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : NaN;
}

const target = await startTarget();
const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-"));
const planFile = path.join(dir, "echo-cpu.yaml");
writeFileSync(planFile, `name: ws-echo-cpu bench
target: { url: "${target.url}" }
connections: { count: ${CONNS}, rate: 10000 }
scenario: { kind: echo, message: { rate: ${RATE / CONNS}, bytes: 64 }, duration: ${SECONDS}s }
`);

const rows: { who: string; run: number; trips: number; cpu: number; per100k: number; whole: number }[] = [];
try {
  for (let run = 1; run <= RUNS; run++) {
    const b = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", process.execPath, "--import", "tsx", "bench/baseline/ws-echo-client.ts", target.url, String(CONNS), String(RATE), String(SECONDS)]);
    await b.exited;
    const r = JSON.parse(b.stdout().trim().split("\n").pop()!) as { received: number; cpuSeconds: number };
    rows.push({ who: "baseline ws client", run, trips: r.received, cpu: r.cpuSeconds, per100k: (r.cpuSeconds * 100_000) / r.received, whole: timeLine(b.stderr()) });

    const a = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", process.execPath, AGENT_BIN, "run", planFile, "--json"]);
    const code = await a.exited;
    const s = JSON.parse(a.stdout()) as { messages: { received: number; sent: number } };
    if (code !== 0) console.error(`agent exited ${code}: ${a.stderr().slice(-300)}`);
    const cpu = agentCpuSeconds(a.stderr());
    rows.push({ who: "volley-agent run", run, trips: s.messages.received, cpu, per100k: (cpu * 100_000) / s.messages.received, whole: timeLine(a.stderr()) });
    console.error(rows.slice(-2).map((x) => `${x.who} run ${x.run}: ${x.trips} round trips, ${x.cpu.toFixed(3)} CPU-s (whole process ${x.whole.toFixed(2)})`).join("\n"));
  }
} finally {
  await target.stop();
}

const med = (who: string, k: "per100k" | "whole" | "trips") => median(rows.filter((r) => r.who === who).map((r) => r[k]));
const base = med("baseline ws client", "per100k"), agent = med("volley-agent run", "per100k");
console.log(JSON.stringify({
  runs: RUNS,
  baseline: { cpuPer100k: base, wholeProcessCpu: med("baseline ws client", "whole"), roundTrips: med("baseline ws client", "trips") },
  agent: { cpuPer100k: agent, wholeProcessCpu: med("volley-agent run", "whole"), roundTrips: med("volley-agent run", "trips") },
  ratio: agent / base,
  perRun: rows,
}, null, 2));
