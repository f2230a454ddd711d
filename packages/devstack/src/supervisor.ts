/** One running instance of a supervised child (an app process, PostgreSQL, redis-server). */
export interface SupervisedProcess {
  pid: number | undefined;
  /** Resolves with the exit code (or signal name) when the process ends, however it ends. */
  exited: Promise<number | string>;
  /** Resolves when the child is ready for the children started after it. */
  ready: Promise<unknown>;
  /** Graceful, bounded stop; resolves when the process is gone. */
  stop(): Promise<unknown>;
}

export interface ChildSpec {
  name: string;
  /** Starts a fresh instance; rejecting counts as a crash once the stack is up. */
  start(): Promise<SupervisedProcess>;
}

export interface SupervisorOptions {
  log: (line: string) => void;
  /** Delay before restart k: initialMs · 2^(k−1), at most maxMs. */
  backoff?: { initialMs: number; maxMs: number };
  /** This many crashes of one child within windowMs stop the whole stack. */
  crashLoop?: { crashes: number; windowMs: number };
}

export interface SupervisorResult {
  code: number;
  reason: string;
}

interface ChildState {
  spec: ChildSpec;
  current: SupervisedProcess | null;
  /** A restart in progress, awaited by stop() so nothing it starts outlives the stack. */
  starting: Promise<unknown> | null;
  timer: NodeJS.Timeout | null;
  crashes: number[];
  /** Until its first start is ready, an exit fails start() instead of restarting the child. */
  wasReady: boolean;
}

const describeExit = (code: number | string) => (typeof code === "number" ? `code ${code}` : `signal ${code}`);
const secondsText = (ms: number) => `${Number((ms / 1000).toFixed(2))} s`;

/**
 * Keeps a stack of children up: started stage by stage (each stage's children in parallel, ready
 * before the next stage), restarted with exponential backoff when one exits on its own, stopped in
 * reverse order on stop() — or when one child crash-loops, since restarting it again will not help
 * and a stack with a part permanently missing looks up but does not work.
 */
export class Supervisor {
  private readonly states: ChildState[][];
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly crashLoop: { crashes: number; windowMs: number };
  private stopping: Promise<SupervisorResult> | null = null;
  private resolveDone!: (r: SupervisorResult) => void;
  /** Resolves once every child is stopped: code 0 after stop(), 1 after a crash loop or a failed start. */
  readonly done = new Promise<SupervisorResult>((resolve) => (this.resolveDone = resolve));

  constructor(
    stages: ChildSpec[][],
    private readonly opts: SupervisorOptions,
  ) {
    this.states = stages.map((stage) => stage.map((spec) => ({ spec, current: null, starting: null, timer: null, crashes: [], wasReady: false })));
    this.backoff = opts.backoff ?? { initialMs: 1000, maxMs: 30_000 };
    this.crashLoop = opts.crashLoop ?? { crashes: 5, windowMs: 60_000 };
  }

  /**
   * Starts every stage in order; a child that fails to come up the first time stops the stack (its
   * error is thrown). False when stop() came first.
   */
  async start(): Promise<boolean> {
    for (const stage of this.states) {
      if (this.stopping) return false;
      const started = await Promise.allSettled(stage.map((state) => this.firstStart(state)));
      // Stopped meanwhile: a child that failed did so because it was stopped.
      if (this.stopping) return false;
      const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) {
        const reason = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
        await this.shutdown(1, reason);
        throw failed.reason;
      }
    }
    return !this.stopping;
  }

  private async firstStart(state: ChildState): Promise<void> {
    const spawn = (async () => {
      const proc = await state.spec.start();
      if (this.stopping) {
        await proc.stop();
        return null;
      }
      this.watch(state, proc);
      return proc;
    })();
    state.starting = spawn.catch(() => {});
    const proc = await spawn.finally(() => (state.starting = null));
    if (!proc) return;
    await proc.ready;
    state.wasReady = true;
  }

  /** Stops every child, last stage first (within a stage, last listed first). */
  stop(): Promise<SupervisorResult> {
    return this.shutdown(0, "stopped");
  }

  /** The running instance of a child, if any (tests kill them). */
  process(name: string): SupervisedProcess | null {
    return this.find(name).current;
  }

  private find(name: string): ChildState {
    const state = this.states.flat().find((s) => s.spec.name === name);
    if (!state) throw new Error(`no supervised child named ${name}`);
    return state;
  }

  private watch(state: ChildState, proc: SupervisedProcess): void {
    state.current = proc;
    // Readiness of an instance stopped or crashed early may never come: not an unhandled rejection.
    proc.ready.catch(() => {});
    void proc.exited.then((code) => {
      if (state.current !== proc) return;
      state.current = null;
      if (!this.stopping && state.wasReady) this.crashed(state, `exited with ${describeExit(code)}`);
    });
  }

  private crashed(state: ChildState, what: string): void {
    const { name } = state.spec;
    const now = Date.now();
    state.crashes = state.crashes.filter((t) => now - t < this.crashLoop.windowMs);
    state.crashes.push(now);
    const attempt = state.crashes.length;
    if (attempt >= this.crashLoop.crashes) {
      // Not logged here: the reason is the stack's result (`npm start` prints it as it exits).
      const reason = `${name} ${what} and crashed ${attempt} times within ${secondsText(this.crashLoop.windowMs)}; restarting it again will not help, so everything was stopped (see ${name}'s output above)`;
      this.opts.log(`${name} ${what}; ${attempt} crashes within ${secondsText(this.crashLoop.windowMs)}: stopping everything`);
      void this.shutdown(1, reason);
      return;
    }
    const delay = Math.min(this.backoff.initialMs * 2 ** (attempt - 1), this.backoff.maxMs);
    this.opts.log(`${name} ${what}; restarting in ${secondsText(delay)} (attempt ${attempt})`);
    state.timer = setTimeout(() => {
      state.timer = null;
      if (this.stopping) return;
      state.starting = this.restart(state).finally(() => (state.starting = null));
    }, delay);
  }

  private async restart(state: ChildState): Promise<void> {
    const { name } = state.spec;
    let proc: SupervisedProcess;
    try {
      proc = await state.spec.start();
    } catch (err) {
      if (!this.stopping) this.crashed(state, `failed to start (${err instanceof Error ? err.message : String(err)})`);
      return;
    }
    if (this.stopping) {
      await proc.stop();
      return;
    }
    this.watch(state, proc);
    // Readiness only decides the log line: an exit is the watcher's to handle, a slow start is not a crash.
    proc.ready.then(
      () => {
        if (state.current === proc && !this.stopping) this.opts.log(`${name} is back (pid ${proc.pid ?? "?"})`);
      },
      () => {},
    );
  }

  private shutdown(code: number, reason: string): Promise<SupervisorResult> {
    if (this.stopping) return this.stopping;
    this.stopping = (async () => {
      for (const stage of [...this.states].reverse()) {
        for (const state of [...stage].reverse()) {
          if (state.timer) clearTimeout(state.timer);
          state.timer = null;
          if (state.starting) await state.starting;
          const proc = state.current;
          state.current = null;
          if (proc) await proc.stop().catch(() => {});
        }
      }
      const result = { code, reason };
      this.resolveDone(result);
      return result;
    })();
    return this.stopping;
  }
}
