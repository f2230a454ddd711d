import { writeFile } from "node:fs/promises";
import { durationMs, durationSchema, FINAL_RUN_STATUSES, planTiming, type Plan, type Run } from "@volley/contracts";
import { ApiRequestError, UnreachableError, VolleyApi } from "./api-client";
import { readEnv } from "./env";
import { formatDuration, formatRunSummary, progressLine } from "./format";
import { EXIT, UsageError, type CliIo, type ExitCode } from "./io";
import { runToJunit } from "./junit";
import { formatIssues, readPlanFile } from "./plan-file";

export interface RunOptions {
  wait?: boolean;
  junit?: string;
  json?: boolean;
  timeout?: string;
}

/** Without --timeout, --wait gives a run the plan's own length (contracts planTiming) plus this for the queue and finalization. */
export const DEFAULT_TIMEOUT = "1h";
/** Polls that may fail in a row (web restarting, a 503 while Redis fails over) before we give up. */
const MAX_POLL_FAILURES = 30;

/** Inconclusive shares 2 with errors: both mean "no verdict", which CI must not read as a pass or as a regression. */
export function exitCodeFor(status: Run["status"]): ExitCode {
  if (status === "passed") return EXIT.passed;
  if (status === "failed") return EXIT.failed;
  return EXIT.error;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

function parseTimeout(value: string): number {
  const parsed = durationSchema.safeParse(/^\d+$/.test(value) ? Number(value) : value);
  if (!parsed.success || durationMs(parsed.data) <= 0) throw new UsageError(`--timeout ${JSON.stringify(value)}: use a duration like 90s, 30m or 2h`);
  return durationMs(parsed.data);
}

/** How long --wait follows a run: --timeout when given, else the plan's own length (ramp, stages, sweep, drain) plus DEFAULT_TIMEOUT. */
export function waitBudgetMs(plan: Plan, timeout: string | undefined): number {
  return timeout !== undefined ? parseTimeout(timeout) : planTiming(plan).endByMs + parseTimeout(DEFAULT_TIMEOUT);
}

/**
 * `volley run plan.yaml [--wait] [--junit out.xml] [--json] [--timeout 30m]`: validates the plan
 * locally, queues it through the REST API and, with --wait, follows it to its end. The exit code
 * says how it ended: 0 passed, 1 thresholds failed, 2 anything that kept the test from judging
 * (errored, aborted, degraded, inconclusive).
 */
export async function runCommand(file: string, opts: RunOptions, io: CliIo): Promise<ExitCode> {
  if (opts.junit && !opts.wait) throw new UsageError("--junit needs --wait: the report is written when the run has ended");
  if (opts.timeout !== undefined) parseTimeout(opts.timeout); // a bad --timeout is refused before anything is read or queued
  const result = await readPlanFile(file);
  if (!result.ok) {
    io.stderr(formatIssues(file, result.issues));
    return EXIT.error;
  }
  const timeoutMs = waitBudgetMs(result.plan, opts.timeout);
  const api = new VolleyApi(readEnv(io.env));
  // With --json stdout carries only JSON, so everything meant for people goes to stderr.
  const say = opts.json ? io.stderr : io.stdout;

  const { id } = await api.createRun(result.plan);
  const url = api.runUrl(id);
  say(`run ${id} queued: ${url}\n`);
  if (!opts.wait) {
    if (opts.json) io.stdout(`${JSON.stringify({ id, url })}\n`);
    return EXIT.passed;
  }

  const run = await waitForRun(api, id, timeoutMs, io);
  if (run === "interrupted") {
    await abortQuietly(api, id, io);
    io.stderr(`interrupted: asked Volley to abort run ${id} (${url})\n`);
    return EXIT.error;
  }
  if (run === "timeout") {
    await abortQuietly(api, id, io);
    io.stderr(`timed out: run ${id} had not ended after ${formatDuration(timeoutMs)} (--timeout); asked Volley to abort it (${url})\n`);
    return EXIT.error;
  }

  if (opts.junit) {
    try {
      await writeFile(opts.junit, runToJunit(run, url));
    } catch (err) {
      throw new UsageError(`cannot write the JUnit report to ${opts.junit}: ${(err as Error).message}`);
    }
  }
  if (opts.json) io.stdout(`${JSON.stringify(run, null, 2)}\n`);
  else io.stdout(formatRunSummary(run, url));
  if (opts.junit) io.stderr(`JUnit report written to ${opts.junit}\n`);
  return exitCodeFor(run.status);
}

/** Polls the run until its status is final; progress goes to stderr. */
async function waitForRun(api: VolleyApi, id: string, timeoutMs: number, io: CliIo): Promise<Run | "timeout" | "interrupted"> {
  const started = Date.now();
  const pollMs = io.pollMs ?? 1000;
  let failures = 0;
  let lastLine = "";
  let redraw = false;
  const endLine = () => {
    if (redraw) io.stderr("\n");
    redraw = false;
  };
  for (;;) {
    if (io.signal?.aborted) return (endLine(), "interrupted");
    let run: Run | undefined;
    try {
      run = await api.getRun(id);
      failures = 0;
    } catch (err) {
      // A run outlives a web restart: keep polling through short outages, not through a 404.
      const transient = err instanceof UnreachableError || (err instanceof ApiRequestError && err.status >= 500);
      if (!transient || ++failures >= MAX_POLL_FAILURES) throw (endLine(), err);
      endLine();
      io.stderr(`warning: ${(err as Error).message} (retrying)\n`);
    }
    if (run) {
      const now = Date.now();
      const line = progressLine(run, now);
      if (io.stderrIsTTY) {
        io.stderr(`\r\x1b[K${line}`);
        redraw = true;
      } else if (line !== lastLine) {
        // Without a terminal (CI logs), a line per poll, as the README promises: the elapsed whole
        // seconds change once a second, so a faster poll (tests) adds no duplicate lines.
        io.stderr(`${line}\n`);
      }
      lastLine = line;
      if (FINAL_RUN_STATUSES.includes(run.status)) return (endLine(), run);
    }
    if (Date.now() - started >= timeoutMs) return (endLine(), "timeout");
    // On a fixed grid from the start, so a slow answer does not push later polls (and lines) back.
    const untilNextPoll = pollMs - ((Date.now() - started) % pollMs);
    await sleep(Math.min(untilNextPoll, Math.max(0, started + timeoutMs - Date.now())), io.signal);
  }
}

async function abortQuietly(api: VolleyApi, id: string, io: CliIo): Promise<void> {
  try {
    await api.abortRun(id);
  } catch (err) {
    // 409: it ended meanwhile. Anything else: say so, the user may need to stop it by hand.
    if (!(err instanceof ApiRequestError && err.status === 409)) io.stderr(`could not abort run ${id}: ${(err as Error).message}\n`);
  }
}
