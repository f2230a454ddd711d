import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface Pinned {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the first line (stdout or stderr) matching re; rejects after timeoutMs. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  kill(): void;
}

/**
 * A child process pinned to one core with taskset, so the target and the load generator never
 * share a core and each one's CPU is its own. `taskset` execs, so child.pid is the node process.
 * A hard time limit kills it if a run hangs.
 */
export function spawnPinned(core: number, args: string[], opts: { env?: NodeJS.ProcessEnv; limitMs?: number } = {}): Pinned {
  const child = spawn("taskset", ["-c", String(core), ...args], { cwd: REPO, env: opts.env ?? process.env });
  let out = "",
    err = "";
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  const scan = (text: string) => {
    for (const line of text.split("\n")) {
      for (const w of [...waiters])
        if (w.re.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  };
  child.stdout.on("data", (d: Buffer) => {
    out += d;
    scan(d.toString());
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d;
    scan(d.toString());
  });
  const limit = setTimeout(() => child.kill("SIGKILL"), opts.limitMs ?? 120_000);
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      clearTimeout(limit);
      resolve(code);
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill: () => child.kill("SIGTERM"),
    waitFor(re, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${re}; stderr: ${err.slice(-500)}`)), timeoutMs);
        waiters.push({
          re,
          resolve: (l) => {
            clearTimeout(t);
            resolve(l);
          },
        });
      });
    },
  };
}

/** The env apps/targets runs with in a bench: every target on a free port (0), no node:cluster workers, plus `extraEnv`. */
export function targetsEnv(extraEnv: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const ports = [
    "WS_ECHO_PORT",
    "SOCKETIO_ECHO_PORT",
    "SOCKJS_ECHO_PORT",
    "STOMP_ECHO_PORT",
    "HTTP_ECHO_PORT",
    "SOCKETCLUSTER_ECHO_PORT",
    "HTTP_CLUSTER_PORT",
    "MQTT_BROKER_PORT",
  ];
  return { ...process.env, ...Object.fromEntries(ports.map((k) => [k, "0"])), HTTP_CLUSTER_WORKERS: "0", LOG_LEVEL: "info", ...extraEnv };
}

/**
 * The echo targets (apps/targets) as one process on core 0; resolves with the raw WebSocket echo's
 * ws:// URL and the Socket.IO v4 echo's http:// URL. Every target listens on a free port (0), so a
 * bench never collides with a dev stack or another bench on 9001-9007; no node:cluster workers.
 * `extraEnv` adds to the targets' env (e.g. ECHO_HOLD=precise).
 */
export async function startTarget(extraEnv: NodeJS.ProcessEnv = {}): Promise<{ url: string; socketioUrl: string; stop: () => Promise<void> }> {
  const p = spawnPinned(0, [process.execPath, "--import", "tsx", "apps/targets/src/main.ts"], {
    env: targetsEnv(extraEnv),
    limitMs: 600_000,
  });
  // Both waiters at once: the two lines can arrive in one chunk.
  const [wsLine, ioLine] = await Promise.all([p.waitFor(/ws echo listening on ws:\/\//), p.waitFor(/socket\.io echo listening on http:\/\//)]);
  const url = /(ws:\/\/[^\s"]+)/.exec(wsLine)![1]!;
  const socketioUrl = /(http:\/\/[^\s"]+)/.exec(ioLine)![1]!;
  return {
    url,
    socketioUrl,
    stop: async () => {
      p.kill();
      await p.exited;
    },
  };
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The agent CLI's closing stderr line: "... agent cpu 0.912 s (user ..., system ...)". */
export function agentCpuSeconds(stderr: string): number {
  const m = /agent cpu ([\d.]+) s/.exec(stderr);
  if (!m) throw new Error(`no cpu line in agent stderr: ${stderr.slice(-500)}`);
  return Number(m[1]);
}

export const AGENT_BIN = "apps/agent/bin/volley-agent.js";
