/** Process exit codes, stable for CI scripts. */
export const EXIT = { passed: 0, failed: 1, error: 2 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * What commands may touch of the outside world. main.ts passes the real process; tests pass
 * buffers, an environment and a short poll interval, and run everything in-process.
 */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** True when stderr is a terminal: progress then redraws one line instead of printing many. */
  stderrIsTTY: boolean;
  /** The variables to read VOLLEY_URL and VOLLEY_TOKEN from; process.env when absent. */
  env?: Record<string, string | undefined>;
  /** How often `run --wait` polls the run; one second unless a test shortens it. */
  pollMs?: number;
  /** Aborted on Ctrl-C / SIGTERM: a waiting run is then aborted on the server too. */
  signal?: AbortSignal;
}

/** A one-line error that ends the command with exit code 2 (bad input, unusable environment). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
