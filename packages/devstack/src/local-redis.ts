import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { Redis } from "ioredis";

export interface RunningRedis {
  url: string;
  pid: number | undefined;
  /** Resolves with the exit code (or signal name) when redis-server ends, however it ends. */
  exited: Promise<number | string>;
  stop(): Promise<void>;
}

export const REDIS_INSTALL_HINT = "sudo apt-get install -y redis-server   (or set REDIS_URL to a Redis you already run)";

export function redisServerPath(): string | null {
  const r = spawnSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" });
  const p = r.stdout.trim();
  return r.status === 0 && p ? p : null;
}

/** A redis-server child of this process; `persist` keeps queue state across restarts (append-only file in `dir`). */
export async function startLocalRedis(opts: { dir: string; port: number; persist: boolean }): Promise<RunningRedis> {
  const bin = redisServerPath();
  if (!bin) throw new Error(`redis-server is not installed and REDIS_URL is not set — run: ${REDIS_INSTALL_HINT}`);
  mkdirSync(opts.dir, { recursive: true });
  const args = ["--port", String(opts.port), "--bind", "127.0.0.1", "--dir", opts.dir, "--save", "", "--protected-mode", "yes"];
  args.push("--appendonly", opts.persist ? "yes" : "no");
  // Own process group, so a terminal's Ctrl-C leaves stopping Redis to its owner, after the apps.
  const child: ChildProcess = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr += String(d)));
  const url = `redis://127.0.0.1:${opts.port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`redis-server exited on port ${opts.port}: ${stderr.trim() || "no output"} — free the port or set VOLLEY_REDIS_PORT, or set REDIS_URL`);
    }
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      break;
    } catch {
      client.disconnect();
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${opts.port} within 10 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    pid: child.pid,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
