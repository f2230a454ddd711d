import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import pg from "pg";
import * as schema from "./schema";

export type Db = NodePgDatabase<typeof schema>;
export interface DbHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

/** One pool per process. Connection errors surface on first query; `checkDatabase` fails fast at startup. */
export function createDb(databaseUrl: string, max = 10): DbHandle {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on("error", () => {});
  return { db: drizzle(pool, { schema }), pool, close: () => pool.end() };
}

/** Throws one readable line when the database cannot be reached. */
export async function checkDatabase(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("select 1");
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(
      `cannot reach PostgreSQL at DATABASE_URL (${redact(databaseUrl)}): ${why || "connection failed"} — start PostgreSQL or set DATABASE_URL to a reachable server (npm start runs an embedded one when DATABASE_URL is unset)`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}

export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "<unparseable url>";
  }
}
