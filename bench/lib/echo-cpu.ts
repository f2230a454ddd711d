import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AGENT_BIN, agentCpuSeconds, median, spawnPinned } from "./spawn-pinned";

/** The load every echo CPU bench puts on the target: 100 connections, 20,000 msg/s in all, for 5 s. */
export const ECHO_CPU_LOAD = { conns: 100, rate: 20_000, seconds: 5 } as const;

export interface EchoCpuRow {
  who: string;
  run: number;
  trips: number;
  cpu: number;
  per100k: number;
  whole: number;
}

export interface EchoCpuCase {
  runs: number;
  /** The baseline's name in rows and on stderr, e.g. "baseline ws client". */
  baselineName: string;
  /** The baseline script and its arguments, run as `node --import tsx <args>`; it prints `{received, cpuSeconds}` last on stdout. */
  baselineArgs: string[];
  /** The plan `volley-agent run` runs, as YAML. */
  planYaml: string;
}

const AGENT_NAME = "volley-agent run";

/** /usr/bin/time's "TIME user system" line: whole-process CPU, Node and tsx start-up included. */
function timeLine(stderr: string): number {
  const m = /TIME ([\d.]+) ([\d.]+)/.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : NaN;
}

/**
 * Runs the baseline and the agent alternately, `runs` times each, both on core 1 (the target is on
 * core 0), and returns one row per process. Alternating spreads the machine's other load over both.
 */
export async function runEchoCpu(c: EchoCpuCase): Promise<EchoCpuRow[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-"));
  const planFile = path.join(dir, "echo-cpu.yaml");
  writeFileSync(planFile, c.planYaml);
  const rows: EchoCpuRow[] = [];
  for (let run = 1; run <= c.runs; run++) {
    const b = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", process.execPath, "--import", "tsx", ...c.baselineArgs]);
    const bCode = await b.exited;
    const last = b.stdout().trim().split("\n").pop();
    if (bCode !== 0 || !last) throw new Error(`baseline exited ${bCode} without its JSON line: ${b.stderr().slice(-500)}`);
    const r = JSON.parse(last) as { received: number; cpuSeconds: number };
    rows.push({ who: c.baselineName, run, trips: r.received, cpu: r.cpuSeconds, per100k: (r.cpuSeconds * 100_000) / r.received, whole: timeLine(b.stderr()) });

    const a = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", process.execPath, AGENT_BIN, "run", planFile, "--json"]);
    const code = await a.exited;
    const s = JSON.parse(a.stdout()) as { messages: { received: number; sent: number } };
    if (code !== 0) console.error(`agent exited ${code}: ${a.stderr().slice(-300)}`);
    const cpu = agentCpuSeconds(a.stderr());
    rows.push({ who: AGENT_NAME, run, trips: s.messages.received, cpu, per100k: (cpu * 100_000) / s.messages.received, whole: timeLine(a.stderr()) });
    console.error(rows.slice(-2).map((x) => `${x.who} run ${x.run}: ${x.trips} round trips, ${x.cpu.toFixed(3)} CPU-s (whole process ${x.whole.toFixed(2)})`).join("\n"));
  }
  return rows;
}

/** The bench's stdout: medians per process and the agent / baseline ratio of CPU per 100k round trips. */
export function echoCpuSummary(runs: number, baselineName: string, rows: EchoCpuRow[]) {
  const med = (who: string, k: "per100k" | "whole" | "trips") => median(rows.filter((r) => r.who === who).map((r) => r[k]));
  const base = med(baselineName, "per100k"), agent = med(AGENT_NAME, "per100k");
  return {
    runs,
    baseline: { cpuPer100k: base, wholeProcessCpu: med(baselineName, "whole"), roundTrips: med(baselineName, "trips") },
    agent: { cpuPer100k: agent, wholeProcessCpu: med(AGENT_NAME, "whole"), roundTrips: med(AGENT_NAME, "trips") },
    ratio: agent / base,
    perRun: rows,
  };
}
