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
  /**
   * More processes to run in the same rounds, after the baseline and the agent (each round runs
   * every one once): another baseline (`baselineArgs`) or another agent plan (`planYaml`).
   */
  extra?: { who: string; baselineArgs?: string[]; planYaml?: string }[];
}

export const AGENT_NAME = "volley-agent run";

/** /usr/bin/time's "TIME user system" line: whole-process CPU, Node and tsx start-up included. */
function timeLine(stderr: string): number {
  const m = /TIME ([\d.]+) ([\d.]+)/.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : NaN;
}

async function baselineRow(who: string, args: string[], run: number): Promise<EchoCpuRow> {
  const b = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", process.execPath, "--import", "tsx", ...args]);
  const bCode = await b.exited;
  const last = b.stdout().trim().split("\n").pop();
  if (bCode !== 0 || !last) throw new Error(`${who} exited ${bCode} without its JSON line: ${b.stderr().slice(-500)}`);
  const r = JSON.parse(last) as { received: number; cpuSeconds: number };
  return { who, run, trips: r.received, cpu: r.cpuSeconds, per100k: (r.cpuSeconds * 100_000) / r.received, whole: timeLine(b.stderr()) };
}

async function agentRow(who: string, planFile: string, run: number): Promise<EchoCpuRow> {
  const a = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", process.execPath, AGENT_BIN, "run", planFile, "--json"]);
  const code = await a.exited;
  const s = JSON.parse(a.stdout()) as { messages: { received: number; sent: number } };
  if (code !== 0) console.error(`${who} exited ${code}: ${a.stderr().slice(-300)}`);
  const cpu = agentCpuSeconds(a.stderr());
  return { who, run, trips: s.messages.received, cpu, per100k: (cpu * 100_000) / s.messages.received, whole: timeLine(a.stderr()) };
}

/**
 * Runs the baseline and the agent (then any extra processes) alternately, `runs` rounds, all on
 * core 1 (the target is on core 0), and returns one row per process. Alternating spreads the
 * machine's other load over all of them.
 */
export async function runEchoCpu(c: EchoCpuCase): Promise<EchoCpuRow[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-"));
  const planFile = (yaml: string, i: number) => {
    const file = path.join(dir, `echo-cpu-${i}.yaml`);
    writeFileSync(file, yaml);
    return file;
  };
  const procs = [{ who: c.baselineName, baselineArgs: c.baselineArgs }, { who: AGENT_NAME, planYaml: c.planYaml }, ...(c.extra ?? [])].map((p, i) =>
    p.planYaml !== undefined ? { who: p.who, plan: planFile(p.planYaml, i) } : { who: p.who, args: p.baselineArgs! },
  );
  const rows: EchoCpuRow[] = [];
  for (let run = 1; run <= c.runs; run++) {
    const round: EchoCpuRow[] = [];
    for (const p of procs) round.push("plan" in p ? await agentRow(p.who, p.plan!, run) : await baselineRow(p.who, p.args!, run));
    rows.push(...round);
    console.error(
      round.map((x) => `${x.who} run ${x.run}: ${x.trips} round trips, ${x.cpu.toFixed(3)} CPU-s (whole process ${x.whole.toFixed(2)})`).join("\n"),
    );
  }
  return rows;
}

/** Median per process over the rows: CPU per 100k round trips, whole-process CPU, round trips. */
export function echoCpuMedians(rows: EchoCpuRow[], who: string) {
  const med = (k: "per100k" | "whole" | "trips") => median(rows.filter((r) => r.who === who).map((r) => r[k]));
  return { cpuPer100k: med("per100k"), wholeProcessCpu: med("whole"), roundTrips: med("trips") };
}

/** Median over the rounds of a's CPU per 100k divided by b's in the same round (neighbours in time). */
export function medianRoundRatio(rows: EchoCpuRow[], a: string, b: string): number {
  const by = (who: string) => new Map(rows.filter((r) => r.who === who).map((r) => [r.run, r.per100k]));
  const aRuns = by(a),
    bRuns = by(b);
  return median([...aRuns].filter(([run]) => bRuns.has(run)).map(([run, x]) => x / bRuns.get(run)!));
}

/** The bench's stdout: medians per process and the agent / baseline ratio of CPU per 100k round trips. */
export function echoCpuSummary(runs: number, baselineName: string, rows: EchoCpuRow[]) {
  const base = echoCpuMedians(rows, baselineName),
    agent = echoCpuMedians(rows, AGENT_NAME);
  return {
    runs,
    baseline: base,
    agent,
    ratio: agent.cpuPer100k / base.cpuPer100k,
    perRun: rows,
  };
}
