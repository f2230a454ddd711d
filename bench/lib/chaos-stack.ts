/**
 * The `npm start` stack for bench/chaos-soak.ts: started on the default ports with a fresh data
 * directory, its processes found by the process tree (never by name alone: other stacks and test
 * suites may run on the same machine), and always stopped — gracefully first, then every process
 * it started is killed, including a frozen one (SIGCONT before anything else).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** The default ports `npm start` uses (packages/devstack/src/env.ts). */
export const PORTS = { web: 3000, hub: 3001, postgres: 54329, redis: 6390, targets: [9001, 9002, 9003, 9004, 9005, 9006, 9007, 9017] } as const;
const ALL_PORTS = [PORTS.web, PORTS.hub, PORTS.postgres, PORTS.redis, ...PORTS.targets];

export type Victim = "agent" | "hub" | "web" | "redis" | "postgres";
export const VICTIMS: readonly Victim[] = ["agent", "hub", "web", "redis", "postgres"];

interface Proc {
  pid: number;
  ppid: number;
  cmd: string;
}

function procTable(): Map<number, Proc> {
  const table = new Map<number, Proc>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      table.set(Number(name), { pid: Number(name), ppid, cmd });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** root and every process below it. */
function tree(root: number, table = procTable()): Proc[] {
  const out: Proc[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const p = table.get(pid);
    if (p) out.push(p);
    for (const c of table.values()) if (c.ppid === pid) queue.push(c.pid);
  }
  return out;
}

/** The pid listening on a TCP port (ss), or null. */
export function listenerPid(port: number): number | null {
  try {
    const out = execFileSync("ss", ["-ltnpH", `sport = :${port}`], { encoding: "utf8" });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export function busyPorts(): number[] {
  return ALL_PORTS.filter((p) => listenerPid(p) !== null);
}

const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
};

export class ChaosStack {
  private front: ChildProcess | null = null;
  private exited = false;
  readonly exit: Promise<number | null>;
  private resolveExit!: (code: number | null) => void;
  private readonly frozen = new Set<number>();
  /** Every pid seen in the stack's tree, so stragglers reparented away from it can still be stopped. */
  private readonly seen = new Set<number>();

  constructor(
    readonly dataDir: string,
    readonly logFile: string,
  ) {
    this.exit = new Promise((r) => (this.resolveExit = r));
  }

  get running(): boolean {
    return this.front !== null && !this.exited;
  }

  async start(timeoutMs = 360_000): Promise<void> {
    if (!existsSync(path.join(REPO, "apps/web/.next/BUILD_ID"))) throw new Error("apps/web is not built: run `npm run build -w @volley/web` first");
    const busy = busyPorts();
    if (busy.length > 0)
      throw new Error(`ports ${busy.join(", ")} are in use: stop the other Volley stack first (this bench runs npm start on the default ports)`);
    const env: NodeJS.ProcessEnv = {};
    // The stack's own defaults only: no URL or port of an outer environment may point it elsewhere.
    for (const [k, v] of Object.entries(process.env))
      if (!/^(DATABASE_URL|REDIS_URL|HUB_|WEB_|AGENT_|VOLLEY_|AUTH_SECRET|.*_ECHO_PORT|HTTP_CLUSTER)/.test(k)) env[k] = v;
    env.VOLLEY_DATA_DIR = this.dataDir;
    const log = openSync(this.logFile, "a");
    this.front = spawn(process.execPath, ["--import", "tsx", path.join(REPO, "packages/devstack/src/cli/start.ts")], {
      cwd: REPO,
      env,
      detached: true,
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    this.front.once("exit", (code) => {
      this.exited = true;
      this.resolveExit(code);
    });
    const deadline = Date.now() + timeoutMs;
    while (!this.log().includes("Volley is up:")) {
      if (this.exited) throw new Error(`npm start exited before the stack was up; see ${this.logFile}`);
      if (Date.now() > deadline) throw new Error(`the stack was not up within ${timeoutMs / 1000} s; see ${this.logFile}`);
      await new Promise((r) => setTimeout(r, 500));
      this.remember();
    }
    this.remember();
  }

  log(): string {
    try {
      return readFileSync(this.logFile, "utf8");
    } catch {
      return "";
    }
  }

  private remember(): Proc[] {
    if (!this.front?.pid) return [];
    const procs = tree(this.front.pid);
    for (const p of procs) this.seen.add(p.pid);
    return procs;
  }

  /** The pids that make up one part of the stack now (empty while it is restarting). */
  pids(victim: Victim): number[] {
    const table = procTable();
    const mine = this.front?.pid ? tree(this.front.pid, table) : [];
    for (const p of mine) this.seen.add(p.pid);
    const ours = new Set(mine.map((p) => p.pid));
    const byPort = (port: number) => {
      const pid = listenerPid(port);
      return pid !== null && ours.has(pid) ? [pid] : [];
    };
    switch (victim) {
      case "web":
        return byPort(PORTS.web);
      case "hub":
        return byPort(PORTS.hub);
      case "redis":
        return byPort(PORTS.redis);
      case "postgres": {
        // The postmaster and its backends: the whole server.
        const [pm] = byPort(PORTS.postgres);
        return pm === undefined ? [] : tree(pm, table).map((p) => p.pid);
      }
      case "agent":
        return mine.filter((p) => p.cmd.includes("apps/agent/src/main.ts")).map((p) => p.pid);
    }
  }

  kill(pids: number[]): void {
    for (const pid of pids) signal(pid, "SIGKILL");
  }

  freeze(pids: number[]): void {
    for (const pid of pids) if (signal(pid, "SIGSTOP")) this.frozen.add(pid);
  }

  thaw(pids: number[]): void {
    for (const pid of pids) {
      signal(pid, "SIGCONT");
      this.frozen.delete(pid);
    }
  }

  /** Graceful stop (npm start's own order), then SIGKILL for whatever is left of the stack. */
  async stop(graceMs = 120_000): Promise<string[]> {
    this.thaw([...this.frozen]);
    const procs = this.remember();
    for (const p of procs) signal(p.pid, "SIGCONT");
    if (this.front?.pid && !this.exited) {
      signal(this.front.pid, "SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.exit, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    }
    return this.killLeftovers();
  }

  /** Synchronous last resort (process exit): every process of the stack and every listener on its ports. */
  killLeftovers(): string[] {
    const killed: string[] = [];
    this.thaw([...this.frozen]);
    if (this.front?.pid) for (const p of tree(this.front.pid)) this.seen.add(p.pid);
    const table = procTable();
    for (const pid of this.seen) {
      const p = table.get(pid);
      if (p && signal(pid, "SIGCONT") && signal(pid, "SIGKILL")) killed.push(`${pid} ${p.cmd.slice(0, 80)}`);
    }
    // The ports were free when the stack started: whatever listens on them now is what it left.
    for (const port of ALL_PORTS) {
      const pid = listenerPid(port);
      if (pid !== null && signal(pid, "SIGCONT") && signal(pid, "SIGKILL")) killed.push(`${pid} (port ${port})`);
    }
    return killed;
  }

  removeData(): void {
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
