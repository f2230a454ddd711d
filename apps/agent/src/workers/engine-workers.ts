import { randomBytes } from "node:crypto";
import { Worker } from "node:worker_threads";
import type { Plan } from "@volley/contracts";
import { systemClock } from "../engine/clock";
import type { WarmUp } from "../engine/shard-warmup";
import type { EngineFrame, RunShardOptions, ShardOutcome, ShardTotals } from "../engine/types";
import { agentEntry, ENGINE_WORKER, type FromWorker, type ToWorker } from "./worker-messages";
import { splitAcrossWorkers } from "./worker-split";

/** As the shard slot: a start instant further in the past than this is not honoured. */
const LATE_START_LIMIT_MS = 1000;

/** After an abort, a worker that has not ended within this long is stopped (terminated) instead. */
export const ABORT_GRACE_MS = 3000;

interface Thread {
  worker: Worker;
  ready: Promise<void>;
  /** Exited (crashed or terminated): replaced before the next run. */
  gone: boolean;
  /** Why it went, for the outcome of a run it was part of. */
  exitReason?: string;
}

/**
 * The agent's engine worker threads: a shard is split across them (splitAcrossWorkers), each runs
 * its part with its own connections and schedule, and their frames are merged exactly into one
 * frame per interval (FrameMerge) on the main thread, which also keeps the hub link, heartbeats and
 * control messages, so an engine saturating its threads never starves them. Threads start once
 * (warm) and serve shard after shard; one that dies is replaced at the next run.
 */
export class EngineWorkers {
  private readonly threads: Thread[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`engine workers: size must be a whole number >= 1, got ${size}`);
  }

  /** Threads started and not gone (none until the first warm, arm or run). */
  get started(): number {
    return this.threads.filter((t) => !t.gone).length;
  }

  /** Starts every thread now (each loads the engine), so a shard's start is not spent loading code. */
  warm(): Promise<void> {
    return this.ensure(this.size).then(() => undefined);
  }

  /**
   * Warms each thread that will run `plan` for its own part (armShard: its driver loaded, its engine
   * dry-run on a loopback), before the start instant is set; starts threads not yet started.
   * Resolves when every part is warm, or failed to be (the run then says why). Never rejects.
   */
  async arm(plan: Plan, shard = "arm", sourceAddresses?: readonly string[]): Promise<WarmUp[]> {
    const shares = splitAcrossWorkers(plan, this.size, shard, sourceAddresses);
    let threads: Thread[];
    try {
      threads = await this.ensure(shares.length);
    } catch {
      return [];
    }
    return Promise.all(
      shares.map(
        (share, w) =>
          new Promise<WarmUp>((resolve) => {
            const { worker } = threads[w]!;
            const done = (warmUp: WarmUp) => {
              worker.off("message", onMessage);
              worker.off("exit", onExit);
              resolve(warmUp);
            };
            const onMessage = (m: FromWorker) => m.type === "armed" && done(m.warmUp);
            const onExit = () => done({ roundTrips: 0, skipped: "the thread exited", ms: 0 });
            worker.on("message", onMessage);
            worker.on("exit", onExit);
            worker.postMessage({ type: "arm", plan: share.plan } satisfies ToWorker);
          }),
      ),
    );
  }

  /**
   * Runs one shard across the threads; like runShard, resolves after its last frame and never
   * rejects. `tap` sees each worker's own frames before they are merged (tests, diagnostics).
   */
  async run(plan: Plan, opts: RunShardOptions, tap?: (worker: number, frame: EngineFrame) => void): Promise<ShardOutcome> {
    const shares = splitAcrossWorkers(plan, this.size, opts.shard ?? randomBytes(4).toString("hex"), opts.sourceAddresses);
    let threads: Thread[];
    try {
      threads = await this.ensure(shares.length);
    } catch (err) {
      return { status: "errored", error: `agent failure: engine worker threads did not start: ${(err as Error).message}`, frames: 0, totals: zeroTotals() };
    }
    // Histogram code loads with the first shard: an idle agent never needs it (resident memory, issue 29).
    const { FrameMerge } = await import("./frame-merge");
    if (opts.signal?.aborted) return { status: "aborted", error: reasonOf(opts.signal.reason), frames: 0, totals: zeroTotals() };
    const clock = opts.clock ?? systemClock();
    const offsetMs = clock.hubNowMs() - Date.now();
    // Threads that were still starting may make the start instant already past: start now rather
    // than open with a burst of the slots already missed (as the shard slot does for a late start).
    const startAt = clock.hubNowMs() - opts.startAt > LATE_START_LIMIT_MS ? clock.hubNowMs() + 20 : opts.startAt;
    const n = shares.length;

    return new Promise<ShardOutcome>((resolve) => {
      const outcomes: (ShardOutcome | undefined)[] = Array.from({ length: n }, () => undefined);
      const received = Array.from({ length: n }, () => 0);
      const starts: number[] = [];
      let startReported = false;
      let failure: string | undefined;
      let aborted: string | undefined;
      let graceTimer: NodeJS.Timeout | undefined;
      const reportStart = () => {
        if (startReported || starts.length === 0) return;
        startReported = true;
        // The schedule has begun when its last part has: the latest start is the honest one.
        opts.onStart?.(Math.max(...starts));
      };
      const merge = new FrameMerge(n, (frame) => {
        reportStart();
        opts.onFrame(frame);
      });
      const post = (w: number, m: ToWorker) => {
        if (!threads[w]!.gone && !outcomes[w]) threads[w]!.worker.postMessage(m);
      };
      const abortAll = (reason: string) => {
        for (let w = 0; w < n; w++) post(w, { type: "abort", reason });
        graceTimer ??= setTimeout(() => {
          for (let w = 0; w < n; w++) {
            if (outcomes[w]) continue;
            const t = threads[w]!;
            t.gone = true;
            void t.worker.terminate();
            ended(w, {
              status: "errored",
              error: `engine worker ${w} did not stop within ${ABORT_GRACE_MS / 1000} s of the abort and was terminated`,
              frames: received[w]!,
              totals: zeroTotals(),
            });
          }
        }, ABORT_GRACE_MS);
      };
      const onAbort = () => {
        aborted = reasonOf(opts.signal!.reason);
        abortAll(aborted);
      };
      const listeners: (() => void)[] = [];
      const ended = (w: number, outcome: ShardOutcome) => {
        if (outcomes[w]) return;
        outcomes[w] = outcome;
        merge.ended(w, received[w]!);
        // A thread none of whose connections opened does not end the shard: like one thread running the
        // whole shard, it errors only if no connection opened in any thread (combine), and the others'
        // connections keep running (their failures are counted as errors either way).
        const noneOpened = n > 1 && outcome.status === "errored" && outcome.totals.opened === 0 && outcome.totals.failed > 0;
        if (outcome.status === "errored" && !noneOpened && failure === undefined && aborted === undefined) {
          failure = n > 1 ? `${outcome.error ?? "errored"} (engine worker ${w} of ${n})` : (outcome.error ?? "errored");
          abortAll(failure);
        }
        if (outcomes.every((o) => o !== undefined)) finish();
      };
      const finish = () => {
        if (graceTimer) clearTimeout(graceTimer);
        opts.signal?.removeEventListener("abort", onAbort);
        for (const off of listeners) off();
        reportStart();
        resolve(combine(outcomes as ShardOutcome[], merge.emitted, failure, aborted));
      };

      shares.forEach((_share, w) => {
        const { worker } = threads[w]!;
        const onMessage = (m: FromWorker) => {
          if (m.type === "frame") {
            received[w]!++;
            tap?.(w, m.frame);
            merge.add(w, m.frame);
          } else if (m.type === "start") {
            starts.push(m.startedAt);
            if (starts.length === n) reportStart();
          } else if (m.type === "end") ended(w, m.outcome);
        };
        const onExit = () =>
          ended(w, {
            status: "errored",
            error: `agent failure: engine worker ${w} exited (${threads[w]!.exitReason ?? "no reason given"})`,
            frames: received[w]!,
            totals: zeroTotals(),
          });
        worker.on("message", onMessage);
        worker.on("exit", onExit);
        listeners.push(() => {
          worker.off("message", onMessage);
          worker.off("exit", onExit);
        });
      });
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      shares.forEach((share, w) => {
        post(w, {
          type: "run",
          plan: share.plan,
          startAt,
          offsetMs,
          shard: share.shard,
          sourceAddresses: share.sourceAddresses,
          publicOnly: opts.publicOnly ?? false,
        });
      });
      // Every part scales alike, so the parts still add up to the shard's rate.
      opts.rate?.listen((c) => {
        for (let w = 0; w < n; w++) post(w, { type: "rate", ...c });
      });
    });
  }

  /** Stops every thread (agent shutdown, end of a standalone run). */
  async close(): Promise<void> {
    const all = this.threads.splice(0);
    await Promise.all(all.map((t) => ((t.gone = true), t.worker.terminate())));
  }

  /** The first `count` threads, started (or restarted) and ready. */
  private async ensure(count: number): Promise<Thread[]> {
    for (let i = 0; i < count; i++) if (!this.threads[i] || this.threads[i]!.gone) this.threads[i] = spawn();
    const mine = this.threads.slice(0, count);
    await Promise.all(mine.map((t) => t.ready));
    return mine;
  }
}

/**
 * From the TypeScript sources (this file is .ts: npm start, the bin, tests), a worker starts at
 * engine-worker-entry.mjs, which registers tsx; compiled (the bin's bundle, the packed agent), a
 * worker starts at the agent's entry, where main.ts serves as a worker when workerData says so.
 */
function spawn(): Thread {
  const fromSources = import.meta.url.endsWith(".ts");
  const entry = fromSources ? new URL("./engine-worker-entry.mjs", import.meta.url) : new URL(agentEntry.url ?? import.meta.url);
  const worker = new Worker(entry, { workerData: { [ENGINE_WORKER]: true }, ...(fromSources ? { execArgv: withoutTsx(process.execArgv) } : {}) });
  // An idle pool never keeps the process alive: the daemon and the CLI decide when to exit.
  worker.unref();
  const thread: Thread = { worker, gone: false, ready: Promise.resolve() };
  thread.ready = new Promise<void>((resolve, reject) => {
    const onMessage = (m: FromWorker) => {
      if (m.type !== "ready") return;
      worker.off("message", onMessage);
      resolve();
    };
    worker.on("message", onMessage);
    worker.once("error", (err) => {
      thread.exitReason = err.message;
      reject(err);
    });
    worker.once("exit", (code) => {
      thread.gone = true;
      thread.exitReason ??= `exit code ${code}`;
      reject(new Error(thread.exitReason));
    });
  });
  // A thread that fails while starting is reported by the run that awaits it; never an unhandled rejection.
  thread.ready.catch(() => {});
  return thread;
}

function combine(outcomes: ShardOutcome[], frames: number, failure: string | undefined, aborted: string | undefined): ShardOutcome {
  const totals = zeroTotals();
  for (const o of outcomes) addTotals(totals, o.totals);
  const sweepStopped = outcomes.find((o) => o.sweepStopped)?.sweepStopped;
  const base = { frames, totals, ...(sweepStopped ? { sweepStopped } : {}) };
  if (failure !== undefined) return { status: "errored", error: failure, ...base };
  // Every thread ended because none of its connections opened: the shard's connections all failed.
  if (outcomes.every((o) => o.status === "errored")) return { status: "errored", error: outcomes[0]!.error ?? "errored", ...base };
  if (aborted !== undefined || outcomes.some((o) => o.status === "aborted")) {
    return { status: "aborted", error: aborted ?? outcomes.find((o) => o.status === "aborted")?.error ?? "aborted", ...base };
  }
  return { status: "completed", ...base };
}

function zeroTotals(): ShardTotals {
  return { expected: 0, sent: 0, received: 0, lost: 0, shed: 0, duplicated: 0, opened: 0, failed: 0, closed: 0 };
}

function addTotals(into: ShardTotals, t: ShardTotals): void {
  for (const k of ["expected", "sent", "received", "lost", "shed", "duplicated", "opened", "failed", "closed"] as const) into[k] += t[k];
  if (t.deliveries) {
    const d = (into.deliveries ??= { expected: 0, received: 0, lost: 0, remote: 0 });
    for (const k of ["expected", "received", "lost", "remote"] as const) d[k] += t.deliveries[k];
  }
  if (t.canary) {
    const c = (into.canary ??= { sent: 0, received: 0, lost: 0 });
    for (const k of ["sent", "received", "lost"] as const) c[k] += t.canary[k];
  }
}

function reasonOf(r: unknown): string {
  if (typeof r === "string") return r;
  if (r instanceof Error && r.name !== "AbortError") return r.message;
  return "aborted";
}

/** The entry registers tsx itself; inherited tsx flags would load it twice (two loaders compiling every file). */
function withoutTsx(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if ((a === "--import" || a === "--require" || a === "--loader") && /tsx/.test(args[i + 1] ?? "")) i++;
    else if (!/^--(import|require|loader)=.*tsx/.test(a)) out.push(a);
  }
  return out;
}
