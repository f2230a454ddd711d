import { spawn, type ChildProcess } from "node:child_process";
import readline from "node:readline";

export interface ManagedProcessOptions {
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Own process group: a terminal's Ctrl-C then reaches only the supervisor, which stops its
   * children in dependency order instead of all at once.
   */
  detached?: boolean;
  /** Called with every output line (stdout and stderr). */
  onLine?: (line: string, stream: "stdout" | "stderr") => void;
}

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  /** Resolves when a line matches, rejects if the process exits first or the timeout passes. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it is gone. */
  stop(graceMs?: number): Promise<number | string>;
}

/** A child process whose output is read line by line and whose shutdown is graceful but bounded. */
export function startManagedProcess(opts: ManagedProcessOptions): ManagedProcess {
  const child = spawn(opts.command, opts.args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: opts.detached ?? false,
  });
  const lines: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (l: string) => void }>();
  const onLine = (line: string, stream: "stdout" | "stderr") => {
    lines.push(line);
    if (lines.length > 2000) lines.shift();
    opts.onLine?.(line, stream);
    for (const w of waiters) if (w.pattern.test(line)) w.resolve(line);
  };
  readline.createInterface({ input: child.stdout! }).on("line", (l) => onLine(l, "stdout"));
  readline.createInterface({ input: child.stderr! }).on("line", (l) => onLine(l, "stderr"));
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
    child.once("error", (err) => {
      onLine(`failed to start ${opts.command}: ${err.message}`, "stderr");
      resolve("spawn-error");
    });
  });

  return {
    name: opts.name,
    child,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = {
          pattern,
          resolve: (l: string) => {
            cleanup();
            resolve(l);
          },
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${opts.name}: no line matching ${pattern} within ${timeoutMs} ms; last output:\n${lines.slice(-20).join("\n")}`));
        }, timeoutMs);
        void exited.then((code) => {
          cleanup();
          reject(new Error(`${opts.name} exited (${code}) before printing ${pattern}; last output:\n${lines.slice(-20).join("\n")}`));
        });
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(waiter);
        };
        waiters.add(waiter);
      });
    },
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
