import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureArtillery } from "./artillery";
import { spawnPinned } from "./spawn-pinned";

/** The part of Artillery's `--output` report a bench reads (its `aggregate`). */
export interface ArtilleryAggregate {
  counters: Record<string, number>;
  rates?: Record<string, number>;
  summaries?: Record<string, { min: number; max: number; count: number; mean: number; p50: number; p99: number; [k: string]: number }>;
  /** Date.now() of the first and last metric any VU emitted: the test's active window. */
  firstCounterAt: number;
  lastCounterAt: number;
}

export interface ArtilleryRun {
  aggregate: ArtilleryAggregate;
  exitCode: number | null;
  /** user + system CPU of the whole process from /usr/bin/time: Node start-up, Artillery's worker thread(s), reporting. */
  wholeCpu: number;
  /**
   * CPU of the process (all threads) and any descendants between the first and last metric
   * (first VU created .. last VU done), from /proc samples every 100 ms, linearly interpolated:
   * the same window the agent and the baseline measure with process.cpuUsage().
   */
  windowCpu: number;
  windowSeconds: number;
  /** Most threads the Artillery process had at once (main + Artillery workers + libuv/V8 threads). */
  maxThreads: number;
  /** Child processes seen under the Artillery process (none expected: its local workers are threads). */
  childProcesses: number;
  stderr: string;
}

const CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // the process has exited between listing and reading
  }
  return out;
}

/** utime + stime of one process (all its threads) in seconds; NaN once it is gone. */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

function threadsOf(pid: number): number {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function timeLine(stderr: string): number {
  const m = /TIME ([\d.]+) ([\d.]+)/.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : NaN;
}

/** CPU at instant t from (time, cpu) samples, interpolated between the two around it. */
function cpuAt(samples: { t: number; cpu: number }[], t: number): number {
  if (samples.length === 0) return NaN;
  if (t <= samples[0]!.t) return samples[0]!.cpu;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!,
      b = samples[i]!;
    if (t <= b.t) return a.cpu + ((b.cpu - a.cpu) * (t - a.t)) / (b.t - a.t);
  }
  return samples[samples.length - 1]!.cpu;
}

/**
 * Runs `artillery run` on its own Node 22 under /usr/bin/time, pinned to core 1 like every load
 * generator here, with the script (YAML) and an optional processor module written beside it.
 * Artillery's local runs use worker_threads (os.cpus().length - 1 of them, so one on 2 cores),
 * all inside this one process, so /usr/bin/time and /proc/<pid>/stat count every worker.
 */
export async function runArtillery(scriptYaml: string, opts: { processor?: { file: string; source: string }; limitMs?: number } = {}): Promise<ArtilleryRun> {
  const tool = ensureArtillery();
  const dir = mkdtempSync(path.join(tmpdir(), "volley-bench-artillery-"));
  const scriptFile = path.join(dir, "script.yaml"),
    reportFile = path.join(dir, "report.json");
  writeFileSync(scriptFile, scriptYaml);
  if (opts.processor) writeFileSync(path.join(dir, opts.processor.file), opts.processor.source);

  const p = spawnPinned(1, ["/usr/bin/time", "-f", "TIME %U %S", tool.node, tool.cli, "run", "--quiet", "--output", reportFile, scriptFile], {
    env: tool.env,
    limitMs: opts.limitMs ?? 120_000,
  });
  // taskset execs /usr/bin/time, which forks node: the node process is time's only child.
  const timePid = p.child.pid!;
  const samples: { t: number; cpu: number }[] = [];
  const seenChildren = new Set<number>();
  let maxThreads = 0;
  const sample = () => {
    const node = childrenOf(timePid)[0];
    if (node === undefined) return;
    const descendants: number[] = [];
    for (let frontier = childrenOf(node); frontier.length > 0; frontier = frontier.flatMap(childrenOf)) descendants.push(...frontier);
    for (const d of descendants) seenChildren.add(d);
    const cpu = [node, ...descendants]
      .map(cpuOf)
      .filter((x) => !Number.isNaN(x))
      .reduce((a, b) => a + b, 0);
    samples.push({ t: Date.now(), cpu });
    maxThreads = Math.max(maxThreads, threadsOf(node));
  };
  const timer = setInterval(sample, 100);
  const exitCode = await p.exited;
  clearInterval(timer);

  if (!existsSync(reportFile))
    throw new Error(`artillery exited ${exitCode} without its report ${reportFile}: ${p.stderr().slice(-1500)} ${p.stdout().slice(-1500)}`);
  const aggregate = (JSON.parse(readFileSync(reportFile, "utf8")) as { aggregate: ArtilleryAggregate }).aggregate;
  const { firstCounterAt, lastCounterAt } = aggregate;
  return {
    aggregate,
    exitCode,
    wholeCpu: timeLine(p.stderr()),
    windowCpu: cpuAt(samples, lastCounterAt) - cpuAt(samples, firstCounterAt),
    windowSeconds: (lastCounterAt - firstCounterAt) / 1000,
    maxThreads,
    childProcesses: seenChildren.size,
    stderr: p.stderr(),
  };
}

/** 64 bytes of JSON, so `capture: { json: "$.p" }` can read the echo back (the agent and baseline send 64 bytes too). */
export const ARTILLERY_PAYLOAD = JSON.stringify({ p: "x".repeat(56) });
if (Buffer.byteLength(ARTILLERY_PAYLOAD) !== 64) throw new Error("payload must be 64 bytes");

/** Times every echo from just before Artillery's send step to just after its reply step (capture done). */
export const RTT_PROCESSOR = `export function startWindow(context, events, done) {
  context.vars.windowEnd = Date.now() + Number(context.vars.windowMs);
  done();
}
export function markSend(context, events, done) {
  context.vars.sentAt = performance.now();
  done();
}
export function recordRtt(context, events, done) {
  events.emit("histogram", "ws_rtt_ms", performance.now() - context.vars.sentAt);
  done();
}
export function inWindow(context, next) {
  next(Date.now() < context.vars.windowEnd);
}
`;

export const counter = (a: ArtilleryRun, k: string) => a.aggregate.counters[k] ?? 0;
export function checkArtillery(a: ArtilleryRun, what: string) {
  if (a.exitCode !== 0) console.error(`artillery (${what}) exited ${a.exitCode}: ${a.stderr.slice(-500)}`);
  const errors = Object.entries(a.aggregate.counters).filter(([k]) => k.startsWith("errors."));
  if (errors.length > 0) console.error(`artillery (${what}) errors: ${JSON.stringify(Object.fromEntries(errors))}`);
}

/**
 * The script both latency benches give Artillery: `conns` VUs arriving over 1 s, each looping
 * {send the 64-byte payload, capture its echo, think} for `seconds` from its own start, every round
 * trip timed by RTT_PROCESSOR into the `ws_rtt_ms` histogram.
 */
export function rttLoopScript(url: string, opts: { conns: number; seconds: number; thinkMs: number }): string {
  return `config:
  target: "${url}"
  processor: "./rtt.mjs"
  phases:
    - { duration: 1, arrivalCount: ${opts.conns} }
  variables: { windowMs: ${opts.seconds * 1000} }
  ws: { perMessageDeflate: false }
scenarios:
  - engine: ws
    flow:
      - function: startWindow
      - loop:
          - function: markSend
          - send: { payload: '${ARTILLERY_PAYLOAD}', capture: { json: "$.p", as: "p" } }
          - function: recordRtt
          - think: "${opts.thinkMs}ms"
        whileTrue: inWindow
`;
}
