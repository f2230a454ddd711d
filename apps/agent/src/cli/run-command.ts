import { readFileSync } from "node:fs";
import { open, readFile, type FileHandle } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { hostname } from "node:os";
import { durationMs, parsePlanDocument, unjudgedCapacityReason } from "@volley/contracts";
import { summarizeRun } from "@volley/metrics";
import { armShard, runShard } from "../engine/run-shard";
import { EngineWorkers } from "../workers/engine-workers";
import { splitAcrossWorkers } from "../workers/worker-split";
import { shardPreflight } from "../engine/shard-preflight";
import type { EngineFrame } from "../engine/types";
import { Progress, type ProgressSink } from "./progress";
import { summaryTable } from "./summary-table";

/** The frames as the hub would store them (intervalFrameSchema): a standalone run is one shard of its own. */
const framesJsonLines = (frames: readonly EngineFrame[]) =>
  frames.map((f, seq) => `${JSON.stringify({ runId: "standalone", shardId: "standalone", agentId: hostname(), seq, ...f })}\n`).join("");

/**
 * 0 passed, 1 thresholds failed, 2 errored, inconclusive (a capacity search that judged no step) or
 * bad input, 130 aborted (Ctrl-C), as shells expect after SIGINT.
 */
export const EXIT = { passed: 0, failed: 1, errored: 2, aborted: 130 } as const;

export interface RunCommandOptions {
  json?: boolean;
  out?: string;
  /** Every interval frame as one JSON line (encoded HdrHistograms and counters): the raw measurements. */
  frames?: string;
  /** Local addresses to bind, round-robin per connection (already expanded). */
  sourceAddresses?: readonly string[];
  /** Engine worker threads to split the plan across, as the daemon does (AGENT_WORKERS); 0 or absent: the main thread. */
  workers?: number;
}

export interface RunCommandIo {
  stdout: (text: string) => void;
  stderr: ProgressSink;
  /** Aborts the run (Ctrl-C): sending stops, the partial summary is still printed. */
  signal?: AbortSignal;
}

/** Lead time before the start instant, so connection setup of the first interval is not already late. */
const START_DELAY_MS = 50;

/**
 * `volley-agent run plan.yaml`: the whole plan on this machine, on the same engine (runShard) as a
 * hub shard, summarized exactly as the hub does (summarizeFrames + evaluateThresholds), so the
 * --json output has the API's `summary` shape and CI scripts work on either.
 */
export async function runCommand(file: string, options: RunCommandOptions, io: RunCommandIo): Promise<number> {
  const err = (line: string) => io.stderr.write(`${line}\n`);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    err(`cannot read plan ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    return EXIT.errored;
  }
  const parsed = parsePlanDocument(text, { readFile: (p) => readFileSync(resolve(dirname(file), p), "utf8") });
  if (!parsed.ok) {
    err(`invalid plan ${file}:`);
    for (const issue of parsed.issues) err(`  ${issue.path}: ${issue.message}`);
    return EXIT.errored;
  }
  const plan = parsed.plan;
  const unfit = shardPreflight(plan, { maxConnections: Number.MAX_SAFE_INTEGER });
  if (unfit) {
    err(`cannot run plan ${file}: ${unfit}`);
    return EXIT.errored;
  }
  // Output files are opened before the run: a bad path fails now, not after a long run is lost.
  const files: { flag: string; path: string; handle: FileHandle }[] = [];
  for (const [flag, target] of [
    ["--out", options.out],
    ["--frames", options.frames],
  ] as const) {
    if (!target) continue;
    try {
      files.push({ flag, path: target, handle: await open(target, "w") });
    } catch (e) {
      err(`cannot write ${flag} ${target}: ${(e as NodeJS.ErrnoException).code ?? String(e)}; pick a path in a writable folder`);
      await Promise.all(files.map((f) => f.handle.close()));
      return EXIT.errored;
    }
  }
  // Threads load the engine before the run starts (and before the "running" line, which benches
  // take as the start): their start-up is not the run's CPU, time or memory.
  // As many as the plan can use: a sweep or a broadcast runs in one, a plan of 3 connections in 3 at most.
  const engines = options.workers ? new EngineWorkers(splitAcrossWorkers(plan, options.workers, "cli").length) : undefined;
  await engines?.warm().catch(() => {}); // a thread that cannot start fails the run below, with its reason
  // Each thread that will run a part warms its engine on it before the start instant is set
  // (armShard: the sleeper thread, a dry run on a loopback), so the first second is not cold code.
  await (engines ? engines.arm(plan, "cli", options.sourceAddresses) : armShard(plan));
  if (plan.agents.count !== 1) err(`note: agents.count is ${JSON.stringify(plan.agents.count)}; standalone runs the whole plan on this machine`);
  const { connections: c, scenario: sc, sweep } = plan;
  const population = c.stages ? `${c.stages.length} stages up to ${c.count} connections` : `${c.count} connections`;
  const rate = sweep ? `sweep from ${sweep.from ?? sc.message.rate} by ${sweep.step}` : String(sc.message.rate);
  const from = options.sourceAddresses?.length ? ` from ${options.sourceAddresses.length} source addresses` : "";
  // http-rps: a closed loop's rate is only a cap, and an exact count ends the run: said up front.
  const closed = sc.kind === "http-rps" && sc.loop === "closed";
  const pace = closed
    ? `closed loop (each user waits for its reply${durationMs(sc.thinkTime) > 0 ? ` + ${sc.thinkTime} think time` : ""}), at most ${rate}/s per ${sc.message.per}`
    : `${rate} msg/s per ${sc.message.per}`;
  const exact = sc.kind === "http-rps" && sc.requests !== undefined ? `, exactly ${sc.requests} requests` : "";
  err(`running "${plan.name}" against ${plan.target.url}${from}: ${population}, ${pace}${exact}`);

  const frames: EngineFrame[] = [];
  const progress = new Progress(io.stderr);
  const cpuBefore = process.cpuUsage();
  const startedMs = performance.now();
  const engine = engines ? engines.run.bind(engines) : runShard;
  const outcome = await engine(plan, {
    startAt: Date.now() + START_DELAY_MS,
    signal: io.signal,
    sourceAddresses: options.sourceAddresses,
    onFrame: (f) => {
      frames.push(f);
      progress.frame(f);
    },
  });
  progress.done();
  void engines?.close();
  // CPU of the run alone (not process start-up or TypeScript loading): what the benchmarks compare.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const wallSeconds = (performance.now() - startedMs) / 1000;

  // With the plan, sweep steps are judged on their merged measurements and the capacity is found.
  const summary = summarizeRun(frames, plan.thresholds, plan);
  const json = `${JSON.stringify(summary, null, 2)}\n`;
  let writeFailed = false;
  for (const f of files) {
    try {
      await f.handle.writeFile(f.flag === "--out" ? json : framesJsonLines(frames));
    } catch (e) {
      writeFailed = true;
      err(`cannot write ${f.flag} ${f.path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    } finally {
      await f.handle.close();
    }
  }
  io.stdout(options.json ? json : summaryTable(summary));

  const failed = summary.thresholds.filter((t) => !t.ok);
  const unjudged = summary.capacity ? unjudgedCapacityReason(summary.capacity) : null;
  let code: number;
  let verdict: string;
  if (outcome.status === "errored") [code, verdict] = [EXIT.errored, `errored: ${outcome.error ?? "unknown error"}`];
  else if (outcome.status === "aborted") [code, verdict] = [EXIT.aborted, `aborted (${outcome.error ?? "interrupted"}); summary covers the run so far`];
  else if (failed.length > 0) [code, verdict] = [EXIT.failed, `failed: ${failed.map((t) => t.message).join("; ")}`];
  else if (unjudged) [code, verdict] = [EXIT.errored, `inconclusive: ${unjudged}`];
  else [code, verdict] = [EXIT.passed, "passed"];
  if (writeFailed && code === EXIT.passed) [code, verdict] = [EXIT.errored, "passed, but an output file could not be written"];
  if (outcome.sweepStopped) err(`sweep stopped: ${outcome.sweepStopped}`);
  err(
    `${verdict} — ${wallSeconds.toFixed(1)} s, agent cpu ${cpuSeconds.toFixed(3)} s (user ${(cpu.user / 1e6).toFixed(3)}, system ${(cpu.system / 1e6).toFixed(3)})`,
  );
  return code;
}
